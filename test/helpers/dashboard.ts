// Logging in to the dashboard the way a user does (`airlock ui --print`, then the one-time
// link), and reading its Server-Sent Events feed.
import { expect } from "bun:test";
import { cliEnv, type DaemonProcess, runCli } from "./daemon.ts";

/** The one-time login link `airlock ui --print` gives. */
export async function loginLink(d: DaemonProcess): Promise<string> {
  const r = await runCli(["ui", "--print"], cliEnv(d));
  expect(r.code).toBe(0);
  const link = r.stdout.trim().split("\n").at(-1)!;
  expect(link).toStartWith(`http://127.0.0.1:${d.port}/ui/login?code=`);
  return link;
}

/** Follows a fresh login link; the session cookie ("name=value") it sets. */
export async function loginCookie(d: DaemonProcess): Promise<string> {
  const res = await fetch(await loginLink(d), { redirect: "manual" });
  expect(res.status).toBe(303);
  const set = res.headers.get("set-cookie")!;
  return set.split(";")[0]!;
}

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

/** An open /ui/api/changes stream: next() resolves the next event (comments skipped). */
export function openFeed(d: DaemonProcess, cookie: string, o: { since?: number; lastEventId?: string } = {}) {
  const ctl = new AbortController();
  const headers: Record<string, string> = { cookie };
  if (o.lastEventId !== undefined) headers["last-event-id"] = o.lastEventId;
  const res = fetch(`${d.url}/ui/api/changes${o.since !== undefined ? `?since=${o.since}` : ""}`, { headers, signal: ctl.signal });
  let buf = "";
  const queue: SseEvent[] = [];
  let chunks: AsyncIterator<Uint8Array> | undefined;
  const dec = new TextDecoder();
  return {
    response: res,
    async next(timeoutMs = 5000): Promise<SseEvent> {
      const r = (chunks ??= (await res).body![Symbol.asyncIterator]());
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ev = queue.shift();
        if (ev) return ev;
        const block = buf.indexOf("\n\n");
        if (block >= 0) {
          const lines = buf.slice(0, block).split("\n");
          buf = buf.slice(block + 2);
          const e: SseEvent = { event: "message", data: "" };
          let any = false;
          for (const line of lines) {
            if (line.startsWith(":")) continue;
            const [k, ...rest] = line.split(":");
            const v = rest.join(":").replace(/^ /, "");
            if (k === "event") e.event = v;
            else if (k === "id") e.id = v;
            else if (k === "data") e.data += v;
            else if (k === "retry") e.event = "retry";
            else continue;
            any = true;
          }
          if (any) queue.push(e);
          continue;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error("no event in time");
        const chunk = await Promise.race([r.next(), Bun.sleep(left).then(() => null)]);
        if (chunk === null) throw new Error("no event in time");
        if (chunk.done) throw new Error("the feed ended");
        buf += dec.decode(chunk.value);
      }
    },
    close: () => ctl.abort(),
  };
}
