// Issue 11's bench: Airlock on PostgreSQL against its floors, as ratios measured in the same run.
//   bun bench/cluster.ts [--quick] [--pg postgres://user@host:port/db] [--float] [--only throughput] [--cases distinct,hot,locks,tasks,feed,check,edit,edits,watched,polled,claims,messages,beats,deliver,stops,status] [--link-ms N]
// The server comes from --pg or AIRLOCK_TEST_PG (as the tests take it); the daemons run on a fresh
// database there, the direct measurements on another, both dropped at the end.
// 1. Single-daemon write calls on a PostgreSQL-backed daemon, medians over sequential calls:
//    increment_counter against "ping + one write transaction", lock+unlock (two calls, two
//    writes) against twice that. The write transaction (BEGIN; UPDATE; COMMIT) is timed directly
//    with Bun's SQL client on the same server, as bench/pg-probe.ts does, alternately with the
//    calls so both see the same moment of the machine. The same calls on a SQLite daemon
//    (default durability, full) against its own ping, for comparison.
// 2. Lock hand-off on PostgreSQL, from sending unlock_resource to the blocked waiter's answer:
//    across two daemons on one database (the holder's daemon and the waiter's alternate) against
//    "ping + NOTIFY delivery" (a NOTIFY committed on one connection → the LISTEN callback on
//    another, timed directly in each round); and on one daemon, against "ping + one write
//    transaction", for comparison. A waiter waits at most 5 s: a round that ends in a timeout is
//    counted as one (at the time it took), and after MAX_TIMEOUTS of them the rounds stop.
// 3. Throughput (issue 21, bench/cluster-throughput.ts): 32 concurrent clients calling
//    increment_counter on distinct counters and on one hot counter, against 1, 2 and 3 daemons
//    on one database, and against PostgreSQL's own floor (32 connections sending single-row
//    UPDATE transactions, as one simple query and through sql.begin; the daemons against the
//    higher) in the same run; then lock_resource + unlock_resource on distinct locks, 1, 2 and 3
//    daemons. --only throughput runs this part alone (about 5 minutes; --quick about 2); --cases picks
//    some of its cases.
// --link-ms N: part 3's daemons and floors reach the server through bench/link.ts, a proxy that
// delays each chunk N ms each way (a round trip over a network, which loopback hides).
// For parts 1 and 2, where taskset exists, the bench pins itself to the first CPU and the daemons
// to the last one (--float leaves everything floating). Part 3 pins nothing: its daemons, and the
// bench, float, since three daemons pinned to one CPU could not use the second. The PostgreSQL
// server is not ours and floats.
// Prints the table and writes its rows into bench/results.json under "cluster", leaving the
// file's other keys alone (not with --only, which leaves the file as it is).
import { SQL } from "bun";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { DaemonProcess } from "../test/helpers/daemon.ts";
import { pinSelf, pinTo } from "./pairing.ts";
import { warmUp } from "./warm-up.ts";
import { median } from "./stats.ts";
import { spawnLink } from "./link.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean" }, pg: { type: "string" }, float: { type: "boolean" }, only: { type: "string" }, cases: { type: "string" }, "link-ms": { type: "string" } } });
const QUICK = values.quick === true;
const SERVER = values.pg ?? process.env.AIRLOCK_TEST_PG;
/** --only throughput: part 3 alone (the one run again and again while the store changes). */
const ONLY = values.only;
/** --link-ms N: part 3's daemons and floors reach the server through a link that delays each way N ms (bench/link.ts). */
const LINK_MS = values["link-ms"] === undefined ? undefined : Number(values["link-ms"]);
if (!SERVER || (ONLY !== undefined && ONLY !== "throughput") || (LINK_MS !== undefined && !(Number.isInteger(LINK_MS) && LINK_MS >= 0))) {
  console.error("usage: bun bench/cluster.ts [--quick] [--pg postgres://user@host:port/db] [--float] [--only throughput] [--cases distinct,hot,locks,tasks,feed,check,edit,edits,watched,polled,claims,messages,beats,deliver,stops,status] [--link-ms N]  (or set AIRLOCK_TEST_PG; N a whole number of milliseconds)");
  process.exit(2);
}
// The helpers read the server from AIRLOCK_TEST_PG when they load.
process.env.AIRLOCK_TEST_PG = SERVER;
const { startDaemon, tempHome } = await import("../test/helpers/daemon.ts");
const { freshDatabase, withClient } = await import("../test/helpers/pg.ts");
const { throughput, CASES } = await import("./cluster-throughput.ts");
/** --cases: the throughput cases to time (all by default); a name not among them is refused. */
const TPUT_CASES = values.cases?.split(",").map((c) => c.trim()) as (typeof CASES)[number][] | undefined;
const unknownCases = TPUT_CASES?.filter((c) => !(CASES as readonly string[]).includes(c)) ?? [];
if (unknownCases.length > 0 || TPUT_CASES?.length === 0) {
  console.error(`--cases: ${unknownCases.length ? `no case named ${unknownCases.map((c) => JSON.stringify(c)).join(", ")}` : "empty"}; the cases are ${CASES.join(", ")}`);
  process.exit(2);
}

const CALLS = QUICK ? 300 : 1000; // sequential calls per figure in part 1
const ROUNDS = QUICK ? 15 : 30; // hand-offs per figure in part 2
// Part 3: 2 cases × 5 setups and 5 cases × 3 setups, each a warm-up + 3 rounds, with the daemons' start: about 5 minutes, 2 quick.
const TPUT_ROUND_MS = QUICK ? 1000 : 3000;
const TPUT_WARM_UP_MS = QUICK ? 500 : 1000;
/** Each daemon setup's JIT warm-up, per daemon in it (cluster-throughput.ts, jitWarmUpMs). */
const TPUT_JIT_WARM_UP_MS = QUICK ? 1000 : 4000;
const WAIT_SECONDS = 5; // a waiter's wait_seconds: a hand-off that never comes costs this much
const MAX_TIMEOUTS = 3; // then the figure stops, reported with what it has

type Row = {
  metric: string;
  value: number;
  unit: string;
  baseline?: string;
  baselineValue?: number;
  ratio?: number;
  mode?: string;
  /** Hand-offs: how many rounds ran, and how many of them ended in the waiter's timeout. */
  rounds?: number;
  timeouts?: number;
  /** "throughput" for part 3's rows (see ThroughputRow); absent for parts 1 and 2. */
  part?: string;
  errors?: number;
  roundsWithErrors?: number;
  clientBusy?: number;
};
const rows: Row[] = [];
const add = (r: Row) => {
  if (r.baselineValue !== undefined) r.ratio = r.value / r.baselineValue;
  rows.push(r);
};

/** Times each fn once per round, in turn, so every figure sees the same moments of the machine. */
async function interleaved(n: number, fns: (() => Promise<unknown>)[]): Promise<number[]> {
  const times = fns.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    for (let f = 0; f < fns.length; f++) {
      const t = performance.now();
      await fns[f]!();
      times[f]!.push(performance.now() - t);
    }
  }
  return times.map(median);
}

const unpin = values.float || ONLY ? null : pinSelf();
const DAEMON_CPU = cpus().length - 1;
async function daemon(o: Parameters<typeof startDaemon>[0]): Promise<DaemonProcess> {
  const d = await startDaemon(o);
  if (unpin) pinTo(d.proc.pid, DAEMON_CPU);
  return d;
}

/** One-connection clients for the direct measurements: a write transaction, and NOTIFY → LISTEN. */
async function probes(url: string) {
  const sql = new SQL(url, { max: 1 });
  const listener = new SQL(url, { max: 1 });
  await sql`CREATE TABLE IF NOT EXISTS airlock_bench_probe (id int PRIMARY KEY, n bigint NOT NULL)`;
  await sql`INSERT INTO airlock_bench_probe VALUES (1, 0) ON CONFLICT (id) DO NOTHING`;
  let deliver: (() => void) | undefined;
  const sub = await listener.listen("airlock_bench_probe", () => deliver?.());
  const p = {
    /** One write transaction, as a daemon's write call commits one. */
    write: () =>
      sql.begin(async (tx) => {
        await tx`UPDATE airlock_bench_probe SET n = n + 1 WHERE id = 1`;
      }),
    /** A NOTIFY committed on one connection until the LISTEN callback on the other. */
    notify: async () => {
      const got = new Promise<void>((resolve) => (deliver = resolve));
      await sql`SELECT pg_notify('airlock_bench_probe', 'x')`;
      await got;
    },
    version: async () => String((await sql`SHOW server_version`)[0].server_version),
    async close() {
      await sub.unlisten().catch(() => undefined);
      await sql.close();
      await listener.close();
    },
  };
  for (let i = 0; i < 50; i++) await p.write(); // warm-up, as pg-probe's
  for (let i = 0; i < 50; i++) await p.notify();
  return p;
}

const increment = (d: DaemonProcess) => () => d.call("increment_counter", { name: "bench:counter" });
const lockUnlock = (d: DaemonProcess) => async () => {
  const l = await d.call("lock_resource", { name: "bench:uncontended", agent_id: "b" });
  if (!l.locked) throw new Error(`bench: uncontended lock refused: ${JSON.stringify(l)}`);
  await d.call("unlock_resource", { name: "bench:uncontended", lock_token: l.lock_token });
};

/** Part 1 on PostgreSQL: each call against ping + one write transaction per write it needs. */
async function pgCalls(d: DaemonProcess, probe: Awaited<ReturnType<typeof probes>>) {
  const mode = "postgres";
  await warmUp(d);
  const ping = () => d.rpc("ping");
  const [p, w, inc, lu] = (await interleaved(CALLS, [ping, probe.write, increment(d), lockUnlock(d)])) as [number, number, number, number];
  add({ mode, metric: "ping round trip (p50)", value: p, unit: "ms" });
  add({ mode, metric: "write transaction, BEGIN/UPDATE/COMMIT, direct (p50)", value: w, unit: "ms" });
  add({ mode, metric: "floor: ping + 1 write transaction", value: p + w, unit: "ms" });
  add({ mode, metric: "increment_counter (p50)", value: inc, unit: "ms", baseline: "ping + 1 write tx", baselineValue: p + w });
  add({ mode, metric: "lock+unlock, uncontended (p50)", value: lu, unit: "ms", baseline: "2 × (ping + 1 write tx)", baselineValue: 2 * (p + w) });
}

/** Part 1 on SQLite, for comparison: the same calls against its own ping. */
async function sqliteCalls(d: DaemonProcess) {
  const mode = "sqlite";
  await warmUp(d);
  const [p, inc, lu] = (await interleaved(CALLS, [() => d.rpc("ping"), increment(d), lockUnlock(d)])) as [number, number, number];
  add({ mode, metric: "ping round trip (p50)", value: p, unit: "ms" });
  add({ mode, metric: "increment_counter (p50)", value: inc, unit: "ms", baseline: "1 ping", baselineValue: p });
  add({ mode, metric: "lock+unlock, uncontended (p50)", value: lu, unit: "ms", baseline: "2 pings", baselineValue: 2 * p });
}

/** Polls until `d` shows the waiter blocked on `name`, or the waiter is answered, or 2 s pass. */
async function untilBlocked(d: DaemonProcess, name: string, answered: () => boolean): Promise<boolean> {
  const deadline = performance.now() + 2000;
  while (performance.now() < deadline && !answered()) {
    const lock = (await d.call("list_locks")).find((l: any) => l.name === name);
    if (lock?.waiters?.some((w: any) => w.agent_id === "waiter" && w.blocked)) return true;
    await Bun.sleep(1);
  }
  return false;
}

type HandOffs = { lags: number[]; pings: number[]; floors: number[]; timeouts: number; unseen: number; rounds: number };

/**
 * Lock hand-offs: in round i the holder takes a lock of its own on holderOf(i), a waiter blocks
 * on it on waiterOf(i) (wait_seconds 5), and the holder unlocks; from sending the unlock to the
 * waiter's answer. Just before each unlock, a ping to each daemon involved and floorProbe, timed.
 */
async function handOffs(holderOf: (i: number) => DaemonProcess, waiterOf: (i: number) => DaemonProcess, floorProbe: () => Promise<unknown>, tag: string): Promise<HandOffs> {
  const r: HandOffs = { lags: [], pings: [], floors: [], timeouts: 0, unseen: 0, rounds: 0 };
  for (let i = 0; i < ROUNDS && r.timeouts < MAX_TIMEOUTS; i++) {
    const [h, w] = [holderOf(i), waiterOf(i)];
    const name = `bench:${tag}:${i}`;
    const held = await h.call("lock_resource", { name, agent_id: "holder" });
    if (!held.locked) throw new Error(`bench: ${name} not granted to its holder: ${JSON.stringify(held)}`);
    let answered = false;
    const waiter = w.call("lock_resource", { name, agent_id: "waiter", wait_seconds: WAIT_SECONDS }).finally(() => (answered = true));
    if (!(await untilBlocked(w, name, () => answered))) r.unseen++;
    if (answered) throw new Error(`bench: the waiter on ${name} was answered before the unlock: ${JSON.stringify(await waiter)}`);
    for (const d of new Set([h, w])) {
      const t = performance.now();
      await d.rpc("ping");
      r.pings.push(performance.now() - t);
    }
    for (let k = 0; k < 3; k++) {
      const t = performance.now();
      await floorProbe();
      r.floors.push(performance.now() - t);
    }
    const t0 = performance.now();
    const unlocked = h.call("unlock_resource", { name, lock_token: held.lock_token });
    const got = await waiter;
    const lag = performance.now() - t0;
    r.rounds++;
    r.lags.push(lag);
    if (!(await unlocked).released) throw new Error(`bench: unlock of ${name} failed`);
    if (got.locked) await w.call("unlock_resource", { name, lock_token: got.lock_token });
    if (!got.locked || lag >= WAIT_SECONDS * 1000 * 0.9) {
      r.timeouts++;
      console.error(`${tag} round ${i}: timed out, answered after ${lag.toFixed(0)} ms: ${JSON.stringify(got)}`);
    }
  }
  return r;
}

function reportHandOffs(r: HandOffs, metric: string, floorName: string, floorMetric: string) {
  const mode = "postgres";
  const lag = median(r.lags);
  const ping = median(r.pings);
  const floor = median(r.floors);
  const of = r.timeouts ? `, ${r.timeouts} of ${r.rounds} timed out` : "";
  add({ mode, metric: floorMetric, value: floor, unit: "ms" });
  // A round that timed out counts at the time it took (about WAIT_SECONDS): the median is what
  // an agent would see.
  add({ mode, metric: `${metric} (p50 of ${r.rounds}${of})`, value: lag, unit: "ms", baseline: `ping + ${floorName}`, baselineValue: ping + floor, rounds: r.rounds, timeouts: r.timeouts });
  const q = (x: number) => [...r.lags].sort((a, b) => a - b)[Math.min(r.lags.length - 1, Math.floor(x * r.lags.length))]!.toFixed(2);
  console.error(`${metric}: min ${q(0)}, p10 ${q(0.1)}, p50 ${q(0.5)}, p90 ${q(0.9)}, max ${q(1)} ms; ping ${ping.toFixed(3)}, ${floorName} ${floor.toFixed(3)} ms`);
  if (r.unseen) console.error(`${metric}: ${r.unseen} of ${r.rounds} waiters were never seen blocked (list_locks on the waiter's daemon); the unlock was sent after 2 s`);
  return lag;
}

/** Parts 1 and 2; the server's version. */
async function callsAndHandOffs(): Promise<string> {
  // A SQLite file, whatever AIRLOCK_TEST_STORE or AIRLOCK_STORE say.
  const home = tempHome();
  const sqlite = await daemon({ home, db: join(home, "state.db"), env: { AIRLOCK_STORE: "sqlite" } });
  try {
    await sqliteCalls(sqlite);
  } finally {
    await sqlite.kill();
  }

  // The daemons' database, and one for the direct measurements on the same server (its WAL and
  // its fsync), kept apart so the daemons' database holds only theirs.
  const db = await freshDatabase();
  let probeDb: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let version = "";
  try {
    probeDb = await freshDatabase();
    const probe = await probes(probeDb.url);
    version = await probe.version();
    const d1 = await daemon({ db: db.url });
    let d2: DaemonProcess | undefined;
    try {
      await pgCalls(d1, probe);
      // One daemon: holder and waiter on d1; the unlock commits the grant in one write transaction.
      const single = await handOffs(() => d1, () => d1, probe.write, "handoff-1");
      const singleLag = reportHandOffs(single, "hand-off on one daemon, unlock → waiter answered", "1 write tx", "write transaction, paired with the hand-offs (p50)");
      // Two daemons on one database: the holder on one, the waiter on the other, alternating.
      d2 = await daemon({ db: db.url });
      await warmUp(d2);
      const pair = [d1, d2] as const;
      const cross = await handOffs((i) => pair[i % 2]!, (i) => pair[(i + 1) % 2]!, probe.notify, "handoff-2");
      const crossLag = reportHandOffs(cross, "hand-off across two daemons, unlock → waiter answered", "NOTIFY delivery", "NOTIFY → LISTEN callback, direct (p50)");
      // Against a timeout the comparison says nothing the row above does not.
      if (cross.timeouts === 0) add({ mode: "postgres", metric: "hand-off across two daemons vs on one (p50)", value: crossLag, unit: "ms", baseline: "hand-off on one daemon", baselineValue: singleLag });
    } finally {
      await d1.kill();
      await d2?.kill();
      await probe.close();
    }
  } finally {
    unpin?.();
    await db.drop();
    await probeDb?.drop();
  }
  return version;
}

const started = performance.now();
let version = "";
if (!ONLY) version = await callsAndHandOffs();
// Part 3, after unpin: nothing of it is pinned.
const link = LINK_MS === undefined ? undefined : await spawnLink({ host: new URL(SERVER).hostname, port: Number(new URL(SERVER).port || 5432) }, LINK_MS);
// Created and dropped directly; used through the link.
const overLink = async () => {
  const db = await freshDatabase();
  return link ? { ...db, url: link.via(db.url) } : db;
};
await throughput({ startDaemon, freshDatabase: overLink, add, roundMs: TPUT_ROUND_MS, warmUpMs: TPUT_WARM_UP_MS, jitWarmUpMs: TPUT_JIT_WARM_UP_MS, ...(TPUT_CASES ? { cases: TPUT_CASES } : {}) });
link?.close();
if (!version) version = String((await withClient(SERVER, (sql) => sql`SHOW server_version`))[0].server_version);

const fmt = (x: number) => (Number.isNaN(x) ? "—" : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(4));
console.log(
  [
    "| store | metric | value | baseline | ratio |",
    "| --- | --- | ---: | --- | ---: |",
    ...rows.map((r) => `| ${r.mode ?? ""} | ${r.metric} | ${fmt(r.value)} ${r.unit} | ${r.baseline ?? ""} | ${r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}×`} |`),
  ].join("\n"),
);
const seconds = (performance.now() - started) / 1000;
console.log(`\nPostgreSQL ${version}; ${cpus().length} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, bun ${Bun.version}${unpin ? ", parts 1–2 pinned" : ""}${link ? `; part 3 through a link of ${LINK_MS} ms each way` : ""}; ${seconds.toFixed(0)} s`);

// Merged into results.json: bench/run.ts rewrites the file with its own keys; this is one more.
// A part run alone (--only) leaves it alone, as bench/run.ts's --only does.
if (ONLY) process.exit(0);
const file = join(import.meta.dir, "results.json");
let results: Record<string, unknown> = {};
if (existsSync(file)) {
  try {
    results = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    console.error("bench/results.json did not parse; writing it with the cluster rows only");
  }
}
results.cluster = { date: new Date().toISOString(), bun: Bun.version, cpus: cpus().length, quick: QUICK, postgres: version, pinned: unpin !== null, rows };
writeFileSync(file, JSON.stringify(results, null, 2));
