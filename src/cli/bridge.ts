// The stdio bridge behind `airlock mcp`: MCP's stdio transport (one JSON-RPC message per line on
// stdin, one per line on stdout, logs on stderr) in front of the daemon's POST /. Every request is
// forwarded as it is, in either era, to the daemon found by the discovery rule (client.ts post():
// TCP or the Unix socket, with the token), so the daemon answers initialize and server/discover
// itself: one truth. A modern request gets the routing headers an HTTP client would send
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name), taken from its body.
//   - Requests run concurrently: a blocked call holds only its own HTTP request; answers are
//     written as they come, each with its id, one whole line at a time.
//   - notifications/cancelled for an id in flight aborts that request (the daemon sees a
//     disconnect and detaches its waiter); per the spec, a cancelled request gets no answer.
//     Other notifications are forwarded (the daemon answers 202); none is answered here.
//   - subscriptions/listen (an SSE answer) is relayed one event per line, until it ends.
//   - No daemon: the request is answered with a JSON-RPC error naming the places tried and how
//     to start one; the next request looks again (the daemon may have come up).
//   - stdin closed: what is in flight gets DRAIN_MS to finish; then the rest are aborted
//     (their waiters detached) and answered with an error, and the bridge exits 0.
import { AirlockError, errorMessage } from "../errors.ts";
import { isModern, META_PROTOCOL_VERSION } from "../mcp/modern.ts";
import { VERSION } from "../version.ts";
import { type ClientOptions, post } from "./client.ts";

/** How long in-flight requests may still finish after stdin closes (a blocked wait is cut then). */
export const DRAIN_MS = 3000;
const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";

type Message = Record<string, unknown>;
type Id = string | number | null;

export interface BridgeIo {
  /** Lines from the client (stdin), without their newline; ends when the client closes it. */
  lines: AsyncIterable<string>;
  /** Writes one line (no newline in it) to the client; resolves once it is handed to the OS. */
  write(line: string): Promise<void>;
  /** Logs (stderr). */
  warn(text: string): void;
}

/** A header value as the spec sends it: as is when plain ASCII, else `=?base64?…?=` (UTF-8). */
export function headerValue(v: string): string {
  return /^[\x20-\x7e]*$/.test(v) && v.trim() === v ? v : `=?base64?${Buffer.from(v, "utf8").toString("base64")}?=`;
}

/** The routing headers a modern request carries over HTTP, from its body; none for the 2025 era. */
export function routingHeaders(msg: Message): Record<string, string> {
  const method = msg.method;
  const params = msg.params;
  if (typeof method !== "string" || typeof params !== "object" || params === null || Array.isArray(params)) return {};
  const p = params as Record<string, unknown>;
  if (!isModern(method, p)) return {};
  const h: Record<string, string> = { "mcp-method": headerValue(method) };
  const meta = p._meta as Record<string, unknown> | undefined;
  const version = meta?.[META_PROTOCOL_VERSION];
  // Without a version the daemon answers -32602 for the envelope, which is the truth to relay.
  if (typeof version === "string") h["mcp-protocol-version"] = headerValue(version);
  const name = method === "tools/call" || method === "prompts/get" ? p.name : method === "resources/read" ? p.uri : undefined;
  if (typeof name === "string") h["mcp-name"] = headerValue(name);
  return h;
}

const errorLine = (id: Id, code: number, message: string, data?: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } });

/** Runs the bridge until the client closes stdin and the last answer is written. */
export async function runBridge(io: BridgeIo, o: ClientOptions = {}): Promise<void> {
  const inFlight = new Map<string, { abort: AbortController; cancelled: boolean }>();
  const running = new Set<Promise<void>>();
  let userAgent = `airlock/${VERSION} (mcp bridge)`;

  const noteClient = (msg: Message) => {
    const p = msg.params as Record<string, unknown> | undefined;
    const info = (msg.method === "initialize" ? p?.clientInfo : (p?._meta as Record<string, unknown> | undefined)?.[META_CLIENT_INFO]) as
      | { name?: unknown; version?: unknown }
      | undefined;
    if (typeof info?.name === "string") userAgent = `airlock/${VERSION} (mcp bridge; ${info.name}/${String(info.version ?? "?")})`.replace(/[^\x20-\x7e]/g, "?");
  };

  async function forward(line: string, msg: Message | unknown[], id: Id | undefined, key: string | undefined): Promise<void> {
    const abort = new AbortController();
    const entry = { abort, cancelled: false };
    if (key !== undefined) inFlight.set(key, entry);
    try {
      const headers = Array.isArray(msg) ? {} : routingHeaders(msg);
      let res: Response;
      let where: string;
      try {
        const r = await post(line, { ...o, headers, signal: abort.signal, userAgent });
        res = r.res;
        where = r.endpoint.where;
      } catch (err) {
        if (entry.cancelled) return;
        if (id === undefined) return io.warn(`airlock mcp: a notification was not delivered: ${errorMessage(err)}`);
        if (abort.signal.aborted) return void (await io.write(errorLine(id, -32800, "request cancelled: the client closed stdin")));
        const details = err instanceof AirlockError ? err.details : undefined;
        return void (await io.write(errorLine(id, -32000, `airlock mcp: ${errorMessage(err)}`, details)));
      }
      try {
        if (id === undefined) return void (await res.body?.cancel());
        if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return await relayEvents(res, io);
        const text = await res.text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          // A guard's plain-text refusal (a bad token, a refused Host): said as a JSON-RPC error.
          return void (await io.write(errorLine(id, -32603, `airlock mcp: the daemon at ${where} answered ${res.status}: ${text.trim()}`)));
        }
        if (!entry.cancelled) await io.write(JSON.stringify(body));
      } catch (err) {
        if (entry.cancelled || id === undefined) return;
        if (abort.signal.aborted) return void (await io.write(errorLine(id, -32800, "request cancelled: the client closed stdin")));
        await io.write(errorLine(id, -32603, `airlock mcp: the answer from the daemon at ${where} broke off: ${errorMessage(err)}`));
      }
    } finally {
      if (key !== undefined && inFlight.get(key) === entry) inFlight.delete(key);
    }
  }

  const start = (p: Promise<void>) => {
    const q = p.catch((err) => io.warn(`airlock mcp: ${errorMessage(err)}`)).finally(() => running.delete(q));
    running.add(q);
  };

  for await (const raw of io.lines) {
    const line = raw.trim();
    if (line === "") continue;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch (err) {
      start(io.write(errorLine(null, -32700, `parse error: ${errorMessage(err)}`)));
      continue;
    }
    if (Array.isArray(msg)) {
      start(forward(line, msg, null, undefined));
      continue;
    }
    if (typeof msg !== "object" || msg === null) {
      start(io.write(errorLine(null, -32600, "invalid request: a message is a JSON object")));
      continue;
    }
    const m = msg as Message;
    if (typeof m.method !== "string") continue; // an answer to a request we never sent
    const hasId = "id" in m && m.id !== undefined;
    if (!hasId) {
      if (m.method === "notifications/cancelled") {
        const target = inFlight.get(JSON.stringify((m.params as Record<string, unknown> | undefined)?.requestId ?? null));
        if (target) {
          target.cancelled = true;
          target.abort.abort();
        }
        continue;
      }
      start(forward(line, m, undefined, undefined));
      continue;
    }
    noteClient(m);
    start(forward(line, m, m.id as Id, JSON.stringify(m.id)));
  }

  // stdin closed: let what is in flight finish for a while, then cut the rest (detaching waiters).
  if (running.size > 0) {
    const all = Promise.all(running);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([all.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), DRAIN_MS)))]);
    clearTimeout(timer);
    if (!drained) {
      for (const e of inFlight.values()) e.abort.abort();
      await Promise.all(running);
    }
  }
}

/** Relays an SSE answer (subscriptions/listen): each event's data, one line each, until it ends. */
async function relayEvents(res: Response, io: BridgeIo): Promise<void> {
  const dec = new TextDecoder();
  let buf = "";
  const flush = async (block: string) => {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    if (data === "") return;
    try {
      await io.write(JSON.stringify(JSON.parse(data)));
    } catch {
      io.warn(`airlock mcp: an event that is not JSON was dropped: ${data.slice(0, 200)}`);
    }
  };
  for await (const chunk of res.body!) {
    buf += dec.decode(chunk, { stream: true });
    for (let i = buf.search(/\r?\n\r?\n/); i >= 0; i = buf.search(/\r?\n\r?\n/)) {
      const block = buf.slice(0, i);
      buf = buf.slice(buf.slice(i).match(/^\r?\n\r?\n/)![0].length + i);
      await flush(block);
    }
  }
  await flush(buf);
}
