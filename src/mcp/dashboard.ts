// The web dashboard's server side, part of the HTTP layer: the page and its assets (src/ui/, the
// browser code, bundled from index.html by Bun's HTML bundler and embedded in the binary), the
// snapshot it renders, and the change feed it follows over Server-Sent Events.
//
// No token ever reaches the page or a URL. `airlock ui` asks the daemon for a one-time code
// (over the guarded JSON-RPC endpoint, so with the bearer token when one is set) and opens
// /ui/login?code=...; the daemon exchanges the code, once and within CODE_TTL_MS, for a session
// cookie (HttpOnly, SameSite=Strict, Path=/ui) and redirects to /ui. Sessions are stored hashed
// in the database, so a page stays logged in, and its feed resumes, across a daemon restart.
// Every /ui request also passes the Host guard, and an Origin other than loopback is refused.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { basename } from "node:path";
import type { Kernel } from "../domain/kernel.ts";
import { changeView, statusSnapshot } from "../domain/snapshot.ts";
import { createLog } from "../log.ts";
import { get, run } from "../store/tx.ts";
import page from "../ui/index.html";
import { messageView } from "./tools/messages.ts";
import { checkHost, type GuardOptions, isLoopbackOrigin, plain, type Transport } from "./guard.ts";

const log = createLog("ui");

/** A code from `airlock ui` is good once, for this long: enough to open a browser. */
export const CODE_TTL_MS = 60_000;
/** A dashboard session lasts a working day. */
export const SESSION_TTL_MS = 12 * 3600 * 1000;
/** A quiet feed sends a comment this often, so proxies and Bun's idle timeout keep it open. */
const PING_MS = 15_000;
/** At most this many changes per SSE write. */
const FEED_BATCH = 500;
/** After a line changes, the feed waits this long for the rest of the burst (one transaction changes
 * lines synchronously, so a few ms is plenty; the page coalesces further) before it says so. */
const WAITS_SETTLE_MS = 5;
/** The browser reconnects this soon after the stream drops (a daemon restart, say). */
const RETRY_MS = 1000;

/** The messages panel: the newest this many (recipient, message) entries. Bodies are shown, so
 *  they stay behind the dashboard's session, never in the status snapshot or the change feed. */
const RECENT_MESSAGES = 100;

/** What /ui/api/messages answers: read_messages' shape, per recipient, with its state. */
async function recentMessages(kernel: Kernel) {
  return (await kernel.messages.recent(RECENT_MESSAGES)).map((e) => ({ agent_id: e.agentId, read: e.read, acked: e.acked, delivered: e.delivered, message: messageView(e.message) }));
}

const SECURITY_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

export interface Dashboard {
  /** Answers a /ui request. */
  fetch(req: Request, pathname: string, via: Transport): Promise<Response>;
  /** A fresh one-time login code for `airlock ui`. */
  newCode(): { code: string; path: string; expires_in_seconds: number };
  /** Ends every open feed (the daemon is stopping). */
  close(): void;
}

export interface DashboardOptions extends GuardOptions {
  kernel: Kernel;
  /** The TCP port, which names the cookie: two daemons on one host keep separate sessions. */
  port: number;
}

interface Asset {
  body: Uint8Array;
  type: string;
}

export function createDashboard(o: DashboardOptions): Dashboard {
  const { kernel } = o;
  const codes = new Map<string, number>(); // code → expires at
  const feeds = new Set<AbortController>();
  const cookieName = `airlock_ui_${o.port}`;
  let assets: Promise<Map<string, Asset>> | undefined;

  const session = async (req: Request): Promise<boolean> => {
    const id = readCookie(req.headers.get("cookie"), cookieName);
    if (!id) return false;
    // Every request of an open page asks: a row read, beside other daemons' row bodies.
    const row = await kernel.ctx.rowRead("ui_sessions", "", () => get<{ expires_at: number }>("SELECT expires_at FROM ui_sessions WHERE id_hash = ?", sha256(id)));
    return row !== null && row.expires_at > kernel.clock.now();
  };

  const login = async (url: URL): Promise<Response> => {
    const code = url.searchParams.get("code") ?? "";
    const now = kernel.clock.now();
    for (const [c, exp] of codes) if (exp <= now) codes.delete(c);
    const known = [...codes.keys()].find((c) => sameSecret(c, code));
    if (!known) return page401("This link has expired or was used already.");
    codes.delete(known);
    const id = randomBytes(32).toString("base64url");
    await kernel.ctx.tx(function* () {
      yield* run("DELETE FROM ui_sessions WHERE expires_at <= ?", now);
      yield* run("INSERT INTO ui_sessions (id_hash, created_at, expires_at) VALUES (?, ?, ?)", sha256(id), now, now + SESSION_TTL_MS);
    });
    const cookie = `${cookieName}=${id}; HttpOnly; SameSite=Strict; Path=/ui; Max-Age=${SESSION_TTL_MS / 1000}`;
    // 303 to a clean URL: the code leaves the address bar and the history entry.
    return new Response(null, { status: 303, headers: { ...SECURITY_HEADERS, location: "/ui", "set-cookie": cookie } });
  };

  const feed = (req: Request, url: URL): Response => {
    const header = req.headers.get("last-event-id");
    const from = header ?? url.searchParams.get("since") ?? "0";
    if (!/^\d{1,15}$/.test(from)) return plain(400, "Last-Event-ID and since must be a revision number");
    let since = Number(from);
    const ctl = new AbortController();
    req.signal.addEventListener("abort", () => ctl.abort(), { once: true });
    feeds.add(ctl);
    const enc = new TextEncoder();
    let first = true;
    const done = (c: ReadableStreamDefaultController<Uint8Array>) => {
      feeds.delete(ctl);
      try {
        c.close();
      } catch {
        // already closed by the client
      }
    };
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        // A session that ended (expired, or its row gone) ends its open feeds too: the browser's
        // reconnect then meets the 401 and the page says so.
        if (ctl.signal.aborted || !(await session(req))) return done(c);
        let out = "";
        if (first) {
          first = false;
          out += `retry: ${RETRY_MS}\n\n`;
          const [oldest, newest] = await kernel.ctx.read(function* () {
            return [yield* kernel.journal.oldestTx(), yield* kernel.journal.revisionTx()] as const;
          });
          if (since > 0 && since < oldest - 1) out += `event: trimmed\ndata: ${JSON.stringify({ oldest })}\n\n`;
          if (since > newest) {
            // A revision this journal never reached: the page followed another database (a
            // fresh one after a reset). It starts over from the newest, after a full refetch.
            out += `event: trimmed\ndata: ${JSON.stringify({ oldest, reset: true })}\n\n`;
            since = newest;
          }
        }
        // The one waiting mechanism: the feed blocks like watch_changes until a change commits,
        // or until a line changes (a waiter came or went), which the journal does not record.
        const round = new AbortController();
        const stop = () => round.abort();
        ctl.signal.addEventListener("abort", stop, { once: true });
        let nudged = false;
        const cancel = kernel.ctx.onceWaitsChanged(() => {
          nudged = true;
          round.abort();
        });
        try {
          let r = await kernel.journal.watch(since, out ? 0 : PING_MS, {}, FEED_BATCH, round.signal);
          if (nudged && !ctl.signal.aborted) {
            // A burst of line changes (a hand-off is several) becomes one event.
            await Bun.sleep(WAITS_SETTLE_MS);
            if (r.changes.length === 0) r = await kernel.journal.watch(since, 0, {}, FEED_BATCH);
            out += "event: waits\ndata: {}\n\n";
          }
          for (const e of r.changes) out += `event: change\nid: ${e.revision}\ndata: ${JSON.stringify(changeView(e))}\n\n`;
          since = r.revision;
        } catch (err) {
          log.warn(`change feed ended: ${err instanceof Error ? err.message : String(err)}`);
          return done(c);
        } finally {
          cancel();
          ctl.signal.removeEventListener("abort", stop);
        }
        if (ctl.signal.aborted) return done(c);
        c.enqueue(enc.encode(out || ": ping\n\n"));
      },
      cancel() {
        ctl.abort();
        feeds.delete(ctl);
      },
    });
    return new Response(stream, {
      headers: { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", "x-accel-buffering": "no" },
    });
  };

  return {
    async fetch(req, pathname, via) {
      const refused = checkHost(req, o, via);
      if (refused) return refused;
      const origin = req.headers.get("origin");
      if (origin !== null && !isLoopbackOrigin(origin, o.extraHosts)) return plain(403, "forbidden: cross-origin requests are not allowed");
      if (req.method !== "GET" && req.method !== "HEAD") return plain(405, "method not allowed", { allow: "GET" });
      const url = new URL(pathname + new URL(req.url, "http://x").search, "http://x");

      if (pathname === "/ui/login") return login(url);
      if (!(await session(req))) {
        if (pathname.startsWith("/ui/api/")) return plain(401, "no dashboard session: run `airlock ui`");
        return page401("Open the dashboard with `airlock ui`: it logs this browser in.");
      }
      if (pathname === "/ui/api/status") return Response.json(await statusSnapshot(kernel), { headers: SECURITY_HEADERS });
      if (pathname === "/ui/api/changes") return feed(req, url);
      if (pathname === "/ui/api/messages") return Response.json(await recentMessages(kernel), { headers: SECURITY_HEADERS });

      assets ??= bundle().catch((err) => {
        assets = undefined;
        throw err;
      });
      const files = await assets;
      const name = pathname === "/ui" || pathname === "/ui/" ? "" : pathname.slice("/ui/".length);
      const a = files.get(name);
      if (!a) return plain(404, "not found");
      return new Response(a.body, { headers: { ...SECURITY_HEADERS, "content-type": a.type } });
    },
    newCode() {
      const code = randomBytes(18).toString("base64url");
      codes.set(code, kernel.clock.now() + CODE_TTL_MS);
      return { code, path: `/ui/login?code=${code}`, expires_in_seconds: CODE_TTL_MS / 1000 };
    },
    close() {
      for (const f of feeds) f.abort();
      feeds.clear();
    },
  };
}

/**
 * The page and its assets by the name they are served under ("" for the page). A compiled
 * binary carries them pre-bundled (page.files); from source, Bun's bundler builds them once,
 * on the first request. Either way the page's asset URLs are rewritten to live under /ui/.
 */
async function bundle(): Promise<Map<string, Asset>> {
  const out = new Map<string, Asset>();
  const add = (path: string, body: Uint8Array, type: string, isPage: boolean) => out.set(isPage ? "" : basename(path), { body, type });
  if (page.files && page.files.length > 0) {
    for (const f of page.files) add(f.path, await Bun.file(f.path).bytes(), f.headers["content-type"], f.loader === "html");
  } else {
    const built = await Bun.build({ entrypoints: [page.index], target: "browser", minify: true });
    if (!built.success) throw new Error(`the dashboard did not build: ${built.logs.map(String).join("; ")}`);
    for (const o of built.outputs) add(o.path, new Uint8Array(await o.arrayBuffer()), o.type, o.path.endsWith(".html"));
  }
  const html = out.get("");
  if (!html) throw new Error("the dashboard bundle has no page");
  let text = new TextDecoder().decode(html.body);
  for (const name of out.keys()) {
    if (name) text = text.replaceAll(`"./${name}"`, `"/ui/${name}"`).replaceAll(`"/${name}"`, `"/ui/${name}"`);
  }
  out.set("", { body: new TextEncoder().encode(text), type: "text/html; charset=utf-8" });
  return out;
}

function page401(why: string): Response {
  const body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Airlock</title></head>` +
    `<body><h1>Airlock dashboard</h1><p>${why}</p><p>Run <code>airlock ui</code> in a terminal on this machine.</p></body></html>`;
  return new Response(body, { status: 401, headers: { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8" } });
}

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Constant-time comparison (hashing first makes the lengths equal). */
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}
