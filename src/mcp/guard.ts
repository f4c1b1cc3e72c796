// The checks every POST / passes, in the order the spec fixes (first failure wins). Each
// answers a plain-text body with its status, like v2. Over the Unix socket the Host check is
// skipped (no browser can be rebound to a socket file, and a client may send any Host or none);
// Origin, media type, bearer and size apply there exactly as over TCP.
import { timingSafeEqual } from "node:crypto";

export const MAX_BODY_BYTES = 1024 * 1024; // v2's limit: 1 MiB

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** How a request arrived: over TCP (loopback or --host) or over the daemon's Unix socket. */
export type Transport = "tcp" | "unix";

export interface GuardOptions {
  token?: string | undefined;
  /** Extra Host names accepted (the address the user bound with an explicit --host). */
  extraHosts?: readonly string[];
}

export function plain(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });
}

/** Host header values already read, and their names (hostName). */
const hostNames = new Map<string, string>();
const HOST_NAMES_KEPT = 64;

/**
 * The host name of a Host header value, without its port; "" when the value is not
 * `host[:port]` with a numeric port ("localhost:80@evil.com", "[::1]x"), so that it matches no name.
 */
export function hostName(hostHeader: string): string {
  let name = hostNames.get(hostHeader);
  if (name === undefined) {
    const m = /^(\[[^\]]*\]|[^:[\]]*)(?::\d*)?$/.exec(hostHeader.trim().toLowerCase());
    name = m ? m[1]! : "";
    // Every request names the same host or two; a client sending many cannot grow the map.
    if (hostNames.size >= HOST_NAMES_KEPT) hostNames.clear();
    hostNames.set(hostHeader, name);
  }
  return name;
}

export function isLoopbackHostHeader(hostHeader: string | null, extra: readonly string[] = []): boolean {
  if (!hostHeader) return false;
  const name = hostName(hostHeader);
  if (LOOPBACK_NAMES.has(name)) return true;
  // --host takes an IPv6 address bare ("fd00::1"); the Host header brackets it.
  const bare = name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
  return extra.some((h) => {
    const e = h.toLowerCase();
    return e === name || e === bare;
  });
}

export function isLoopbackOrigin(origin: string, extra: readonly string[] = []): boolean {
  try {
    const u = new URL(origin);
    return isLoopbackHostHeader(u.host, extra);
  } catch {
    return false;
  }
}

export function isJsonMediaType(contentType: string | null): boolean {
  if (!contentType) return false;
  return contentType.split(";")[0]!.trim().toLowerCase() === "application/json";
}

/** The daemon's token and its digest, hashed once rather than at every request. */
let expected: { token: string; digest: Uint8Array } | null = null;

/** Constant-time comparison of the bearer token (hashing first makes the lengths equal). */
export function bearerMatches(header: string | null, token: string): boolean {
  if (!header) return false;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!m) return false;
  if (expected?.token !== token) expected = { token, digest: Bun.SHA256.hash(token) as Uint8Array };
  return timingSafeEqual(Bun.SHA256.hash(m[1]!.trim()) as Uint8Array, expected.digest);
}

/** Host check for every route (DNS-rebinding defence); /healthz needs it too. Not over the socket. */
export function checkHost(req: Request, o: GuardOptions, via: Transport = "tcp"): Response | null {
  if (via === "unix") return null;
  if (!isLoopbackHostHeader(req.headers.get("host"), o.extraHosts)) return plain(403, "forbidden: Host must be localhost, 127.0.0.1 or [::1]");
  return null;
}

/**
 * Guards 3–6 for POST / (path and method are the router's): Host (TCP only), Origin, media
 * type, bearer. The body size (7) is checked while reading the body.
 */
export function checkRpcRequest(req: Request, o: GuardOptions, via: Transport = "tcp"): Response | null {
  const host = checkHost(req, o, via);
  if (host) return host;
  const origin = req.headers.get("origin");
  if (origin !== null && !isLoopbackOrigin(origin, o.extraHosts)) return plain(403, "forbidden: cross-origin requests are not allowed");
  if (!isJsonMediaType(req.headers.get("content-type"))) return plain(415, "unsupported media type: use Content-Type: application/json");
  if (o.token !== undefined && !bearerMatches(req.headers.get("authorization"), o.token)) {
    return plain(401, "unauthorized: send Authorization: Bearer <token> (see `airlock token`)", { "www-authenticate": "Bearer" });
  }
  return null;
}

/** Reads the body, or answers 413 when it is over the limit (declared or actual). */
export async function readBody(req: Request): Promise<string | Response> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) return plain(413, "request body too large (limit 1 MiB)");
  let buf: ArrayBuffer;
  try {
    buf = await req.arrayBuffer();
  } catch (err) {
    // The client broke off mid-body: an answer, not a thrown error (Bun would make it a 500).
    return plain(400, `could not read the request body: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (buf.byteLength > MAX_BODY_BYTES) return plain(413, "request body too large (limit 1 MiB)");
  return new TextDecoder().decode(buf);
}
