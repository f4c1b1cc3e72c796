// The dashboard's server side over real HTTP (the browser tests drive the page itself): the
// one-time code becomes an HttpOnly, SameSite=Strict cookie; nothing under /ui answers without
// it; no token ever reaches the page; the Host and Origin guards apply; the SSE feed resumes
// from Last-Event-ID across a kill -9 and restart, with the same session.
import { expect, setDefaultTimeout, test } from "bun:test";
import { loginCookie, loginLink, openFeed } from "../helpers/dashboard.ts";
import { useDaemonStarter } from "../helpers/daemon.ts";

setDefaultTimeout(30_000);

const start = useDaemonStarter();

test("nothing under /ui answers without a session cookie, and a login link works once", async () => {
  const d = await start();
  for (const path of ["/ui", "/ui/", "/ui/api/status", "/ui/api/changes", "/ui/index.html"]) {
    const res = await fetch(`${d.url}${path}`);
    expect([path, res.status]).toEqual([path, 401]);
    expect(await res.text()).toContain("airlock ui");
  }
  // A forged cookie is no better than none.
  expect((await fetch(`${d.url}/ui/api/status`, { headers: { cookie: `airlock_ui_${d.port}=forged` } })).status).toBe(401);

  const link = await loginLink(d);
  const first = await fetch(link, { redirect: "manual" });
  expect(first.status).toBe(303);
  expect(first.headers.get("location")).toBe("/ui");
  const cookie = first.headers.get("set-cookie")!;
  expect(cookie).toMatch(new RegExp(`^airlock_ui_${d.port}=[A-Za-z0-9_-]{40,}; `));
  for (const attr of ["HttpOnly", "SameSite=Strict", "Path=/ui"]) expect(cookie).toContain(attr);
  // Used once: the same link is refused, and sets nothing.
  const again = await fetch(link, { redirect: "manual" });
  expect(again.status).toBe(401);
  expect(again.headers.get("set-cookie")).toBeNull();
  expect((await fetch(`${d.url}/ui/login?code=guessed`, { redirect: "manual" })).status).toBe(401);

  const session = cookie.split(";")[0]!;
  const status = await fetch(`${d.url}/ui/api/status`, { headers: { cookie: session } });
  expect(status.status).toBe(200);
  expect(await status.json()).toMatchObject({ source: "daemon", graph: { edges: [], deadlocks: [], would_deadlock: [] } });
});

test("the page and its assets carry no token, and come with a strict CSP", async () => {
  const d = await start();
  expect(d.token).toBeTruthy();
  const cookie = await loginCookie(d);
  const page = await fetch(`${d.url}/ui`, { headers: { cookie } });
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
  const html = await page.text();
  const assets = [...html.matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
  expect(assets.some((a) => a.endsWith(".js"))).toBe(true);
  expect(assets.some((a) => a.endsWith(".css"))).toBe(true);
  const bodies = [html];
  for (const a of assets) {
    const res = await fetch(`${d.url}${a}`, { headers: { cookie } });
    expect([a, res.status]).toEqual([a, 200]);
    bodies.push(await res.text());
    expect((await fetch(`${d.url}${a}`)).status).toBe(401); // assets need the session too
  }
  for (const b of bodies) expect(b.includes(d.token!)).toBe(false);
});

test("the Host and Origin guards apply to /ui", async () => {
  const d = await start();
  const cookie = await loginCookie(d);
  const rebound = await fetch(`${d.url}/ui/api/status`, { headers: { cookie, host: "evil.example:80" } });
  expect(rebound.status).toBe(403);
  const crossOrigin = await fetch(`${d.url}/ui/api/status`, { headers: { cookie, origin: "https://evil.example" } });
  expect(crossOrigin.status).toBe(403);
  const sameOrigin = await fetch(`${d.url}/ui/api/status`, { headers: { cookie, origin: d.url } });
  expect(sameOrigin.status).toBe(200);
  expect((await fetch(`${d.url}/ui/api/status`, { method: "POST", headers: { cookie } })).status).toBe(405);
});

test("the change feed streams changes in order and resumes from Last-Event-ID across kill -9 and restart", async () => {
  const first = await start();
  const cookie = await loginCookie(first);
  const feed = openFeed(first, cookie, { since: 0 });
  expect((await feed.response).headers.get("content-type")).toContain("text/event-stream");
  expect((await feed.next()).event).toBe("retry");

  const lock = await first.call("lock_resource", { name: "build", agent_id: "a", ttl_seconds: 60 });
  expect(lock.locked).toBe(true);
  await first.call("increment_counter", { name: "n" });
  const e1 = await feed.next();
  const e2 = await feed.next();
  expect(e1.event).toBe("change");
  expect(JSON.parse(e1.data)).toMatchObject({ kind: "lock.granted", resource: "build", agent_id: "a", fence: lock.fence });
  expect(JSON.parse(e2.data)).toMatchObject({ kind: "counter.changed", resource: "n" });
  expect(Number(e2.id)).toBeGreaterThan(Number(e1.id));
  expect(Number(e1.id)).toBe(JSON.parse(e1.data).revision);
  feed.close();

  // kill -9; changes happen on the restarted daemon; the browser reconnects with Last-Event-ID.
  await first.kill("SIGKILL");
  const second = await start({ home: first.home, db: first.db, port: first.port });
  await second.call("increment_counter", { name: "after" });
  const resumed = openFeed(second, cookie, { lastEventId: e1.id! });
  expect((await resumed.response).status).toBe(200); // the session survived the restart
  expect((await resumed.next()).event).toBe("retry");
  const r2 = await resumed.next();
  expect(r2.id).toBe(e2.id); // nothing after e1 is missed...
  const r3 = await resumed.next();
  expect(JSON.parse(r3.data)).toMatchObject({ kind: "counter.changed", resource: "after" });
  expect(Number(r3.id)).toBeGreaterThan(Number(e2.id)); // ...and revisions keep growing
  resumed.close();
  expect((await fetch(`${second.url}/ui/api/changes?since=abc`, { headers: { cookie } })).status).toBe(400);

  // A revision from another database (ahead of this journal) starts over from the newest.
  const ahead = openFeed(second, cookie, { lastEventId: "999999" });
  expect((await ahead.next()).event).toBe("retry");
  const reset = await ahead.next();
  expect(reset.event).toBe("trimmed");
  expect(JSON.parse(reset.data)).toMatchObject({ reset: true });
  await second.call("increment_counter", { name: "after-reset" });
  const fresh = await ahead.next();
  expect(JSON.parse(fresh.data)).toMatchObject({ kind: "counter.changed", resource: "after-reset" });
  ahead.close();
});

test("a revision older than the journal keeps is announced as trimmed, then the feed goes on from the oldest kept", async () => {
  const d = await start({ env: { AIRLOCK_JOURNAL_MAX: "10" } });
  // The count is checked every 256 appends: 300 leave only the newest ten.
  for (let i = 0; i < 300; i++) await d.call("increment_counter", { name: "c" });
  const cookie = await loginCookie(d);
  const feed = openFeed(d, cookie, { since: 1 });
  expect((await feed.next()).event).toBe("retry");
  const trimmed = await feed.next();
  expect(trimmed.event).toBe("trimmed");
  const oldest = JSON.parse(trimmed.data).oldest as number;
  expect(oldest).toBeGreaterThan(200); // trimmed to the newest ten at the 256th append
  const next = await feed.next();
  expect(Number(next.id)).toBe(oldest);
  feed.close();
});
