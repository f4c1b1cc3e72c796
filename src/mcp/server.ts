// The HTTP layer: routes, guards, the JSON-RPC envelope, and Bun.serve. It knows nothing of
// locks: every tools/call goes to the dispatcher with the request's AbortSignal, so a client
// that disconnects while blocked is detached from its wait at once. One app serves both the TCP
// listener and the Unix socket; each listener says which it is, and only the guards care.
import type { Kernel } from "../domain/kernel.ts";
import { createLog } from "../log.ts";
import { mark, TRACING } from "../trace.ts";
import { CallTaskRunner } from "./call-tasks.ts";
import type { Dashboard } from "./dashboard.ts";
import { checkHost, checkRpcRequest, type GuardOptions, plain, readBody, type Transport } from "./guard.ts";
import { EraTally } from "./eras.ts";
import { dispatch } from "./jsonrpc.ts";

// A tool call may block 50 s; Bun's default idle timeout (10 s) would cut it. 120 s leaves
// room for a slow client on top of the longest wait (Bun allows at most 255).
export const IDLE_TIMEOUT_SECONDS = 120;

const log = createLog("http");

export interface AppOptions extends GuardOptions {
  kernel: Kernel;
  /** The web dashboard at /ui; without it /ui is not found. */
  dashboard?: Dashboard;
  /** The tasks extension's calls; without it the app makes its own (nothing resumed: tests). */
  callTasks?: CallTaskRunner;
}

export interface App {
  /** `via` is the listener the request came in on (default TCP, the guarded-by-Host one). */
  fetch(req: Request, via?: Transport): Promise<Response>;
}

/** The MCP app itself: an App that can also end its open subscriptions/listen streams. */
export interface McpApp extends App {
  /** Ends every open subscriptions/listen stream (the daemon is stopping). */
  close(): void;
}

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

export function createApp(o: AppOptions): McpApp {
  const callTasks = o.callTasks ?? new CallTaskRunner(o.kernel);
  const eras = new EraTally();
  const listens = new Set<() => void>();
  return {
    close() {
      for (const end of [...listens]) end();
    },
    async fetch(req, via = "tcp") {
      if (TRACING) mark("recv");
      const pathname = pathOf(req.url);
      if (pathname === "/healthz") {
        if (req.method !== "GET" && req.method !== "HEAD") return plain(405, "method not allowed", { allow: "GET" });
        return checkHost(req, o, via) ?? plain(200, "ok");
      }
      if (o.dashboard && (pathname === "/ui" || pathname.startsWith("/ui/"))) return o.dashboard.fetch(req, pathname, via);
      if (pathname !== "/") return plain(404, "not found");
      if (req.method !== "POST") return plain(405, "method not allowed", { allow: "POST" });
      const refused = checkRpcRequest(req, o, via);
      if (refused) return refused;
      const body = await readBody(req);
      if (body instanceof Response) return body;
      const r = await dispatch(body, { kernel: o.kernel, signal: req.signal, dashboard: o.dashboard, headers: req.headers, eras, taskStatus: callTasks, listens, callTasks });
      if (r.kind === "accepted") return new Response(null, { status: 202 });
      if (r.kind === "stream") return new Response(r.body, { status: 200, headers: SSE_HEADERS });
      const res = new Response(JSON.stringify(r.body), { status: r.status ?? 200, headers: JSON_HEADERS });
      if (TRACING) mark(`respond ${String(r.body.id)}`);
      return res;
    },
  };
}

/**
 * The request's path. Bun hands over a relative URL ("/healthz") when the Host header is
 * missing, empty or no valid authority ("a b", "user@localhost", "[::1"), and new URL() throws
 * on those: such a request must reach the Host guard (403), not the error handler (500).
 */
export function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    const start = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
    try {
      return new URL(start < 0 ? "/" : url.slice(start), "http://host.invalid").pathname;
    } catch {
      return "/";
    }
  }
}

export interface Listening {
  server: ReturnType<typeof Bun.serve>;
  url: string;
}

const SERVE_OPTIONS = {
  idleTimeout: IDLE_TIMEOUT_SECONDS,
  // Our own guard answers 413 at 1 MiB, in the spec's order; this only stops absurd uploads.
  maxRequestBodySize: 8 * 1024 * 1024,
  error: (err: Error) => {
    log.error(`internal error: ${err.stack ?? err.message}`);
    return plain(500, "internal error");
  },
};

export function listen(app: App, host: string, port: number): Listening {
  const server = Bun.serve({ ...SERVE_OPTIONS, hostname: host, port, fetch: (req) => app.fetch(req, "tcp") });
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return { server, url: `http://${shownHost}:${server.port}` };
}

/**
 * Serves the same app on a Unix socket. The file is created under a 0177 umask, so it is 0600
 * from its first instant (the caller chmods it again, for filesystems that ignore the umask).
 * Throws EADDRINUSE when the path exists: deciding whether it is stale is the caller's job.
 */
export function listenUnix(app: App, path: string): Listening {
  const old = process.umask(0o177);
  try {
    // Bun's types leave idleTimeout out for a socket; it takes it, and a 50 s wait must not be cut.
    const options = { ...SERVE_OPTIONS, unix: path, fetch: (req: Request) => app.fetch(req, "unix") };
    const server = Bun.serve(options as unknown as Parameters<typeof Bun.serve>[0]);
    return { server, url: `unix:${path}` };
  } finally {
    process.umask(old);
  }
}
