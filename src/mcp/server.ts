// The HTTP layer: routes, guards, the JSON-RPC envelope, and Bun.serve. It knows nothing of
// locks: every tools/call goes to the dispatcher with the request's AbortSignal, so a client
// that disconnects while blocked is detached from its wait at once.
import type { Kernel } from "../domain/kernel.ts";
import { checkHost, checkRpcRequest, type GuardOptions, plain, readBody } from "./guard.ts";
import { dispatch } from "./jsonrpc.ts";

// A tool call may block 50 s; Bun's default idle timeout (10 s) would cut it. 120 s leaves
// room for a slow client on top of the longest wait (Bun allows at most 255).
export const IDLE_TIMEOUT_SECONDS = 120;

export interface AppOptions extends GuardOptions {
  kernel: Kernel;
}

export interface App {
  fetch(req: Request): Promise<Response>;
}

const JSON_HEADERS = { "content-type": "application/json" };

export function createApp(o: AppOptions): App {
  return {
    async fetch(req) {
      const pathname = pathOf(req.url);
      if (pathname === "/healthz") {
        if (req.method !== "GET" && req.method !== "HEAD") return plain(405, "method not allowed", { allow: "GET" });
        return checkHost(req, o) ?? plain(200, "ok");
      }
      if (pathname !== "/") return plain(404, "not found");
      if (req.method !== "POST") return plain(405, "method not allowed", { allow: "POST" });
      const refused = checkRpcRequest(req, o);
      if (refused) return refused;
      const body = await readBody(req);
      if (body instanceof Response) return body;
      const r = await dispatch(body, { kernel: o.kernel, signal: req.signal });
      if (r.kind === "accepted") return new Response(null, { status: 202 });
      return new Response(JSON.stringify(r.body), { status: 200, headers: JSON_HEADERS });
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

export function listen(app: App, host: string, port: number): Listening {
  const server = Bun.serve({
    hostname: host,
    port,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    // Our own guard answers 413 at 1 MiB, in the spec's order; this only stops absurd uploads.
    maxRequestBodySize: 8 * 1024 * 1024,
    fetch: (req) => app.fetch(req),
    error: () => plain(500, "internal error"),
  });
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return { server, url: `http://${shownHost}:${server.port}` };
}
