// Shared pieces of the reliability suite: a seeded PRNG (every generated run can be replayed
// from the seed it prints), a raw HTTP/1.1 client over TCP (fetch would add or override Host,
// Accept and Content-Type), and process memory from /proc.
//
// Knobs: RELIABILITY_SEED=<n> replays a printed seed; RELIABILITY_SOAK_MS=<ms> changes the soak's
// length (default 60 s). They are not AIRLOCK_* variables because test/preload.ts clears those.
import { connect } from "node:net";
import { readFileSync } from "node:fs";

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer in [lo, hi]. */
    int: (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number): boolean => next() < p,
  };
}
export type Prng = ReturnType<typeof prng>;

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `request` byte for byte on a fresh connection and reads until the server closes it.
 * Resolves with the parsed response; rejects when the connection ends without a status line
 * (a dropped connection), or when nothing comes back within timeoutMs.
 */
export function rawHttp(port: number, request: string | Uint8Array, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) return reject(err);
      try {
        resolve(parseRawResponse(Buffer.concat(chunks)));
      } catch (e) {
        reject(e as Error);
      }
    };
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    sock.on("data", (c: Buffer) => chunks.push(c));
    sock.on("error", (e) => {
      // A reset after a complete answer (the server closed while we were still writing) is an answer.
      if (chunks.length > 0) finish();
      else finish(e);
    });
    sock.on("close", () => finish());
    sock.write(request);
  });
}

export function parseRawResponse(data: Buffer): RawResponse {
  const text = data.toString("latin1");
  // A 100 Continue interim response may come first.
  let start = 0;
  while (text.startsWith("HTTP/1.1 100", start)) start = text.indexOf("\r\n\r\n", start) + 4;
  const split = text.indexOf("\r\n\r\n", start);
  if (split < 0) throw new Error(`connection closed without an HTTP answer (got ${JSON.stringify(text.slice(0, 120))})`);
  const lines = text.slice(start, split).split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
  if (!m) throw new Error(`not an HTTP status line: ${JSON.stringify(lines[0])}`);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let rest = data.subarray(Buffer.byteLength(text.slice(0, split + 4), "latin1"));
  if (headers["transfer-encoding"] === "chunked") {
    const out: Buffer[] = [];
    for (;;) {
      const nl = rest.indexOf("\r\n");
      const n = Number.parseInt(rest.subarray(0, nl).toString("latin1"), 16);
      if (!n) break;
      out.push(rest.subarray(nl + 2, nl + 2 + n));
      rest = rest.subarray(nl + 2 + n + 2);
    }
    rest = Buffer.concat(out);
  }
  return { status: Number(m[1]), headers, body: rest.toString("utf8") };
}

/** An HTTP/1.1 request as text, with Content-Length and Connection: close added. */
export function rawRequest(head: string[], body: string | Uint8Array = ""): Uint8Array {
  const b = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  const h = Buffer.from([...head, `Content-Length: ${b.length}`, "Connection: close", "", ""].join("\r\n"), "latin1");
  return Buffer.concat([h, b]);
}

/** Resident set size of a process in bytes (Linux). */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

export const MiB = 1024 * 1024;

export const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;
