// Shared pieces of the reliability suite: a seeded PRNG (every generated run can be replayed
// from the seed it prints), a raw HTTP/1.1 client over TCP (fetch would add or override Host,
// Accept and Content-Type), process memory from /proc, and what the crash loops (this folder's
// and test/cluster's) share: a locker's request and the invariants of the task queue.
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

/** A call of a crash loop: answered (sent and answered at these performance.now() times), or failed. */
export type Answer<T> = { ok: true; value: T; sentAt: number; ackAt: number } | { ok: false };

/** lock_resource's answer. */
export interface LockAnswer {
  locked: boolean;
  lock_token: string;
  fence: number;
}

/**
 * A crash-loop locker's request: lock_resource on `name` for `agent` with a TTL of ttlSeconds,
 * waiting up to 1 s. Resolves with the answered grant; with null when the call failed (its
 * outcome unknown, or an error) or the wait timed out (then `denied` is called).
 */
export async function requestLock<A extends Answer<LockAnswer>>(
  call: (tool: string, args: Record<string, unknown>) => Promise<A>,
  name: string,
  agent: string,
  ttlSeconds: number,
  denied: () => void,
): Promise<Extract<A, { ok: true }> | null> {
  const g = await call("lock_resource", { name, agent_id: agent, ttl_seconds: ttlSeconds, wait_seconds: 1 });
  if (!g.ok) return null;
  if (!g.value.locked) {
    denied();
    return null;
  }
  return g as Extract<A, { ok: true }>;
}

/** A task as list_tasks shows it. */
export interface ListedTask {
  id: number;
  payload: string;
  state: string;
}

/** What a crash loop saw of its task queue, and the queue as list_tasks shows it after the drain. */
export interface TaskRecord {
  listed: readonly ListedTask[];
  /** Every acknowledged push_task: the id answered and the payload sent. */
  pushAcks: readonly { id: number; payload: string }[];
  /** Payloads of the pushes whose outcome is unknown. */
  unknownPayloads: ReadonlySet<string>;
  /** How many times each task id was acknowledged completed:true. */
  completedAcks: ReadonlyMap<number, number>;
  /** complete_task calls whose outcome is unknown. */
  unknownCompletes: number;
  /** complete_task calls answered completed:false, with when the claim they completed was sent. */
  staleCompletes: readonly { ackAt: number; claimSentAt: number }[];
  /** Task ids acknowledged for more than one push (an acknowledged push was lost). */
  reusedIds: number;
  leaseS: number;
  clockSlackMs: number;
  /** The drain's limit, named in the "not drained" violation when given. */
  drainMs?: number;
}

/**
 * The task queue's invariants after a crash loop: every acknowledged push listed once with its
 * payload, nothing listed that nobody pushed, no completion acknowledged twice or left undone,
 * everything drained, no more tasks done without an acknowledgement than completions with an
 * unknown outcome, and completed:false only once a lease could have run out. Returns the broken
 * ones (as messages) and the figures the loops print.
 */
export function taskViolations(r: TaskRecord): { violations: string[]; tasksLost: number; duplicatedCompletions: number; done: number } {
  const { listed, pushAcks, unknownPayloads, completedAcks, unknownCompletes } = r;
  const violations: string[] = [];
  const ids = listed.map((t) => t.id);
  const payloadCount = new Map<string, number>();
  for (const t of listed) payloadCount.set(t.payload, (payloadCount.get(t.payload) ?? 0) + 1);
  const byId = new Map(listed.map((t) => [t.id, t]));
  const tasksLost = pushAcks.filter(({ id, payload }) => byId.get(id)?.payload !== payload).length;
  const ackedPayloads = new Set(pushAcks.map((a) => a.payload));
  const phantoms = listed.filter((t) => !ackedPayloads.has(t.payload) && !unknownPayloads.has(t.payload));
  const duplicatedCompletions = [...completedAcks.values()].filter((n) => n > 1).length;
  const doneWithoutAck = listed.filter((t) => t.state === "done" && !completedAcks.has(t.id)).length;
  const notDone = listed.filter((t) => t.state !== "done");
  if (new Set(ids).size !== ids.length) violations.push("list_tasks shows an id twice");
  if ([...payloadCount.values()].some((n) => n > 1)) violations.push("list_tasks shows a payload twice (one push applied twice)");
  if (tasksLost > 0) violations.push(`${tasksLost} acknowledged tasks lost`);
  if (r.reusedIds > 0) violations.push(`${r.reusedIds} task ids acknowledged twice`);
  if (phantoms.length > 0) violations.push(`${phantoms.length} tasks nobody pushed: ${JSON.stringify(phantoms.slice(0, 3))}`);
  if (duplicatedCompletions > 0) violations.push(`${duplicatedCompletions} tasks acknowledged completed:true twice`);
  const ackedNotDone = [...completedAcks.keys()].filter((id) => byId.get(id)?.state !== "done").length;
  if (ackedNotDone > 0) violations.push(`${ackedNotDone} tasks acknowledged completed but not done`);
  const within = r.drainMs === undefined ? "" : ` in ${r.drainMs} ms`;
  if (notDone.length > 0) violations.push(`${notDone.length} tasks not drained${within}: ${JSON.stringify(notDone.slice(0, 3))}`);
  if (doneWithoutAck > unknownCompletes) violations.push(`${doneWithoutAck} tasks done without an acknowledged completion, but only ${unknownCompletes} completions had an unknown outcome`);
  // complete_task answered completed:false only for a claim whose lease had run out.
  const earlyStale = r.staleCompletes.filter((x) => x.ackAt - x.claimSentAt < r.leaseS * 1000 - r.clockSlackMs).length;
  if (earlyStale > 0) violations.push(`${earlyStale} completions refused before the lease could have run out`);
  return { violations, tasksLost, duplicatedCompletions, done: listed.length - notDone.length };
}
