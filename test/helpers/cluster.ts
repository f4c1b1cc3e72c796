// Several real daemons sharing one PostgreSQL database (docs/cluster.md): what the cluster
// tests start. Each cluster gets a fresh database on the test server (AIRLOCK_TEST_PG), so its
// daemons share their state with each other and with nothing else; stopping it kills the
// daemons (SIGKILL: nothing of theirs is worth a graceful exit here) and drops the database.
// Also here: the seeded randomness the cluster tests use, printed and replayable.
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ORDER_LOCK } from "../../src/domain/cluster-sync.ts";
import { type DaemonProcess, type StartOptions, startDaemon, storeQuery } from "./daemon.ts";
import { freshDatabase } from "./pg.ts";
import { until } from "./until.ts";

export interface Cluster {
  /** The daemons, in start order. */
  daemons: DaemonProcess[];
  /** The database URL they share. */
  db: string;
  /** Kills every daemon still running and drops the database. Idempotent. */
  stop(): Promise<void>;
}

/**
 * A fresh database with n daemons on it (started one after another: the first migrates).
 * `reach(i, url)`: the URL daemon i reaches the database by (a link with a delay: bench/link.ts),
 * and its options; the database's own URL and `o` by default.
 */
export async function startCluster(n = 2, o: Omit<StartOptions, "db" | "home"> = {}, reach?: (i: number, url: string) => Omit<StartOptions, "home">): Promise<Cluster> {
  const database = await freshDatabase();
  const daemons: DaemonProcess[] = [];
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all(daemons.map((d) => d.kill(9)));
    await database.drop();
  };
  try {
    for (let i = 0; i < n; i++) daemons.push(await startDaemon({ ...o, db: database.url, ...reach?.(i, database.url) }));
  } catch (err) {
    await stop();
    throw err;
  }
  return { daemons, db: database.url, stop };
}

/**
 * One cluster for the whole file: started before its tests, stopped after them. The result is
 * read inside tests (`const c = useCluster(); ... c.daemons[0]`).
 */
export function useCluster(n = 2, o: Omit<StartOptions, "db" | "home"> = {}): Cluster {
  let current: Cluster | undefined;
  beforeAll(async () => {
    current = await startCluster(n, o);
  }, 60_000);
  afterAll(async () => {
    await current?.stop();
  });
  return {
    get daemons() {
      if (!current) throw new Error("useCluster: used outside a test");
      return current.daemons;
    },
    get db() {
      if (!current) throw new Error("useCluster: used outside a test");
      return current.db;
    },
    stop: () => current?.stop() ?? Promise.resolve(),
  };
}

/**
 * A seeded generator in [0, 1) (mulberry32), for the randomized parts of a test. The seed is
 * AIRLOCK_TEST_SEED when set (to replay a run), else a fresh one; either way it is printed with
 * the test's name. (AIRLOCK_TEST_*, because test/preload.ts clears every other AIRLOCK_ variable.)
 */
export function seeded(what: string): { seed: number; next: () => number; int: (n: number) => number } {
  const given = process.env.AIRLOCK_TEST_SEED;
  const seed = given ? Number(given) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  console.log(`${what}: seed ${seed} (replay with AIRLOCK_TEST_SEED=${seed})`);
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return { seed, next, int: (n) => Math.floor(next() * n) };
}

/** The median of some numbers (NaN for none). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** A client-side view of who held a lock when: one interval per grant, from the answers. */
export interface Hold {
  name: string;
  agent: string;
  fence: number;
  /** When the grant's answer arrived (the lock was held by then). */
  from: number;
  /** When the releasing call was sent (the lock was still held until then); Infinity if never. */
  to: number;
  /** When the grant's request was sent. */
  asked?: number;
  /** When the release's answer arrived (released:true), if it did. */
  released?: number;
}

/**
 * Double grants in a history of holds of one or more locks: two grants of one name whose
 * intervals overlap, or two grants of one name with one fence. Each interval lies inside the
 * true one (the grant committed before its answer; the release commits after it is sent), so
 * an overlap here is an overlap on the server: sound, if not complete. Also a fence that went
 * backwards: a grant asked for after an earlier one was released must carry a greater fence.
 */
export function doubleGrants(holds: readonly Hold[]): string[] {
  const found: string[] = [];
  const byName = new Map<string, Hold[]>();
  for (const h of holds) byName.set(h.name, [...(byName.get(h.name) ?? []), h]);
  for (const [name, hs] of byName) {
    const fences = new Map<number, Hold>();
    for (const h of hs) {
      const same = fences.get(h.fence);
      if (same) found.push(`${name}: fence ${h.fence} granted twice (${same.agent}, ${h.agent})`);
      fences.set(h.fence, h);
    }
    // Sorted by start, each grant is compared with the one that had been held longest so far.
    const sorted = [...hs].sort((a, b) => a.from - b.from);
    let last: Hold | undefined;
    for (const cur of sorted) {
      if (last && cur.from < last.to) {
        found.push(`${name}: ${cur.agent} (fence ${cur.fence}) was answered while ${last.agent} (fence ${last.fence}) still held it`);
      }
      if (!last || cur.to > last.to) last = cur;
    }
    for (const a of hs) {
      if (a.released === undefined) continue;
      for (const b of hs) {
        if (b.asked !== undefined && a.released < b.asked && b.fence <= a.fence) {
          found.push(`${name}: fence ${b.fence} (${b.agent}) was granted after fence ${a.fence} (${a.agent}) was released`);
        }
      }
    }
  }
  return found;
}

/** How long a call that must be answered by a hand-off may take before the test calls it lost. */
export const ANSWERED_WITHIN_MS = 5000;

/** p, or a failure naming what was not answered in time (a liveness bound, never a latency assertion). */
export async function answered<T>(what: string, p: Promise<T>, ms = ANSWERED_WITHIN_MS): Promise<T> {
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not answered within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every value the journal recorded for counter name, read from d page by page. */
export async function journalValues(d: DaemonProcess, name: string): Promise<number[]> {
  const values: number[] = [];
  let since = 0;
  for (;;) {
    const r = await d.call("watch_changes", { since_revision: since, kinds: ["counter."], resource_prefix: name, limit: 1000 });
    if (r.isError) throw new Error(`watch_changes: ${JSON.stringify(r)}`);
    if (r.changes.length === 0) return values;
    for (const ch of r.changes) if (ch.resource === name) values.push(ch.value);
    since = r.revision;
  }
}

/**
 * Waits until every daemon of the database has beaten since the last one started, so that each
 * has seen every other come (heartbeats once a second). A test that then holds the order open
 * is not caught out by what a liveness change leaves for a daemon's next transaction in the
 * global order: run one on each daemon first.
 */
export async function seenEachOther(db: string): Promise<void> {
  const sql = "SELECT bool_and(seen_at > (SELECT max(started_at) FROM daemons)) AS ok FROM daemons";
  await until("each daemon beaten since the last one came", async () => (await storeQuery<{ ok: boolean }>(db, sql))[0]!.ok === true, 5_000, 50);
}

/**
 * A row batch of some daemon, held open on a connection of its own: `hold()` takes the global
 * order shared, as a row batch does (a transaction in the global order then waits for it, and
 * every request queued behind that one), `tx` runs statements inside it, `commit()` and
 * `rollback()` end it; `close()` (in a finally) rolls back whatever is open and disconnects.
 */
export async function rowBatchHolder(db: string) {
  const { SQL } = await import("bun");
  const writer = new SQL(db, { max: 1 });
  const tx = await writer.reserve();
  return {
    tx,
    hold: () => tx.unsafe(`BEGIN; SELECT pg_advisory_xact_lock_shared(${ORDER_LOCK})`),
    commit: () => tx.unsafe("COMMIT"),
    rollback: () => tx.unsafe("ROLLBACK"),
    async close(): Promise<void> {
      await tx.unsafe("ROLLBACK").catch(() => undefined);
      tx.release();
      await writer.close();
    },
  };
}

/**
 * The labels a daemon's trace (AIRLOCK_TRACE, written when it exits: src/trace.ts) marked
 * between `from` and `to` (wall-clock ms), in order: "order shared" / "order exclusive" for
 * each transaction, "due <key>" for each scheduler entry run.
 */
export function traceLabels(file: string, from: number, to: number): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => [Number(l.slice(0, l.indexOf(" "))), l.slice(l.indexOf(" ") + 1)] as const)
    .filter(([t]) => t >= from && t <= to)
    .map(([, label]) => label);
}

/**
 * Daemons on db, started in order: `first` untraced, then `traced` ones each writing its trace
 * (AIRLOCK_TRACE) to a file of its own; `labels(d, from, to)` reads d's (traceLabels), once d
 * has exited.
 */
export async function tracedDaemons(db: string, traced: number): Promise<{ first: DaemonProcess; traced: DaemonProcess[]; labels: (d: DaemonProcess, from: number, to: number) => string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "airlock-trace-"));
  const first = await startDaemon({ db });
  const files = new Map<DaemonProcess, string>();
  for (let i = 0; i < traced; i++) {
    const file = join(dir, `d${i + 2}.trace`);
    const d = await startDaemon({ db, env: { AIRLOCK_TRACE: file } });
    files.set(d, file);
  }
  return { first, traced: [...files.keys()], labels: (d, from, to) => traceLabels(files.get(d)!, from, to) };
}

/**
 * Two daemons on a fresh database, the second traced (tracedDaemons), each seen by the other:
 * `body` runs, then the traced daemon is stopped (its trace is written at exit); the answer is
 * body's, and `labels(from, to)`, the traced daemon's marks in that window (wall-clock ms). Both
 * daemons end and the database goes, whatever happened.
 */
export async function withTracedPair<T>(body: (d1: DaemonProcess, d2: DaemonProcess, db: string) => Promise<T>): Promise<{ value: T; labels: (from: number, to: number) => string[] }> {
  const db = await freshDatabase();
  const { first: d1, traced, labels } = await tracedDaemons(db.url, 1);
  const d2 = traced[0]!;
  try {
    await seenEachOther(db.url);
    const value = await body(d1, d2, db.url);
    await d2.kill();
    return { value, labels: (from, to) => labels(d2, from, to) };
  } finally {
    await Promise.all([d1.kill(9), d2.kill(9)]);
    await db.drop();
  }
}

/**
 * withTracedPair, whose `body` answers the window (wall-clock ms) to count in: the traced
 * daemon's transactions' orders in that window ("order shared", "order exclusive").
 */
export async function ordersOfTracedPair(body: (d1: DaemonProcess, d2: DaemonProcess, db: string) => Promise<{ from: number; to: number }>): Promise<string[]> {
  const { value, labels } = await withTracedPair(body);
  return labels(value.from, value.to).filter((l) => l.startsWith("order "));
}
