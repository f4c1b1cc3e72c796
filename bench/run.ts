// The benchmark suite (`npm run bench`). Every figure is reported against a baseline measured
// in the same run on the same daemon (a JSON-RPC ping), so a noisy machine cancels out; the
// absolute numbers are printed too. Writes bench/results.json and bench/results.svg.
//   bun bench/run.ts [--quick] [--modes normal,full] [--only journal|goals|paths|eras|messages|worktrees]
import { openSync, readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type DaemonProcess, startDaemon } from "../test/helpers/daemon.ts";
import { flock, LOCK_EX, LOCK_UN, monotonicNs } from "./flock.ts";
import { renderChart } from "./chart.ts";
import { fsyncer, medianPair, paired, pinSelf, pinTo } from "./pairing.ts";
import { eraFigures } from "./eras.ts";
import { messageFigures } from "./messages.ts";
import { pathFigures } from "./paths.ts";
import { worktreeFigures } from "./worktrees.ts";
import { warmUp } from "./warm-up.ts";
import { median, pct } from "./stats.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean" }, modes: { type: "string" }, only: { type: "string" } } });
const QUICK = values.quick === true;
// --only journal: just the journal's cost (both daemons), for iterating on the write path.
// --only goals: just the issue's three figures against their floors (hand-off, lock+unlock,
// increment_counter at 64 clients), for iterating on the hot path.
// --only paths: just the crowded-room path figures (bench/paths.ts), on one daemon per mode.
// --only eras: just a tools/call in the 2026-07-28 era against the same call in the 2025 era.
// --only messages: just send_message + read_messages against increment_counter (bench/messages.ts).
// --only worktrees: just check_paths with 1,000 touched paths in the room against an empty room (bench/worktrees.ts).
const ONLY = values.only;
const ONLY_CHOICES = ["journal", "goals", "paths", "eras", "messages", "worktrees"];
if (ONLY !== undefined && !ONLY_CHOICES.includes(ONLY)) {
  throw new Error(`--only accepts ${ONLY_CHOICES.map((c) => `"${c}"`).join(", ")} (got ${ONLY})`);
}
const MODES = (values.modes ?? "normal,full").split(",").filter(Boolean);
const SECONDS = QUICK ? 0.5 : 2; // per throughput point
const CONCURRENCY = [1, 16, 64];

type Row = { metric: string; value: number; unit: string; baseline?: string; baselineValue?: number; ratio?: number; mode?: string };
const rows: Row[] = [];
const add = (r: Row) => {
  if (r.baselineValue !== undefined) r.ratio = r.value / r.baselineValue;
  rows.push(r);
};

/** Each call's time, or the time it returns itself (a number: what it timed of its own work). */
async function timeEach(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const own = await fn(i);
    out.push(typeof own === "number" ? own : performance.now() - t);
  }
  return out;
}

type Op = (client: number, i: number) => Promise<unknown>;

/** How many operations `clients` concurrent keep-alive loops complete in `seconds`, and in how long. */
async function burst(clients: number, seconds: number, op: Op, from = 0): Promise<{ count: number; ms: number }> {
  const end = performance.now() + seconds * 1000;
  let count = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = from; performance.now() < end; i++) {
        await op(c, i);
        count++;
      }
    }),
  );
  return { count, ms: performance.now() - t0 };
}

// A busy machine's load changes from one second to the next: the rates of a throughput point
// (the ping's, the calls' it is the baseline of) are taken in slices, alternately, so that each
// sees the same moments.
const SLICES = QUICK ? 2 : 4;

/** Operations per second of each op, with `clients` concurrent loops, timed in alternating slices. */
async function throughputs(clients: number, seconds: number, ops: Op[]): Promise<number[]> {
  const count = ops.map(() => 0);
  const ms = ops.map(() => 0);
  for (let s = 0; s < SLICES; s++) {
    for (const [k, op] of ops.entries()) {
      const r = await burst(clients, seconds / SLICES, op, count[k]);
      count[k]! += r.count;
      ms[k]! += r.ms;
    }
  }
  return ops.map((_, k) => count[k]! / (ms[k]! / 1000));
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function latencies(d: DaemonProcess, mode: string) {
  await warmUp(d);
  const ping = median(await timeEach(QUICK ? 200 : 1000, () => d.rpc("ping")));
  add({ mode, metric: "ping round trip (p50)", value: ping, unit: "ms" });
  // Under full every write's answer waits for an fsync; on a machine whose disk others use, its
  // cost moves from one second to the next. So each timed figure below is paired with a ping
  // and (under full) an fsync of its own, taken in the same instant: its floor sees the same load.
  const fsyncs = fsyncer(d.home, mode === "full");

  const cyclePings: number[] = [];
  const cycleSyncs: number[] = [];
  const lockUnlock = median(
    await timeEach(QUICK ? 200 : 1000, async () => {
      const t = performance.now();
      await d.rpc("ping");
      cyclePings.push(performance.now() - t);
      cycleSyncs.push(fsyncs.once());
      const t0 = performance.now();
      const l = await d.call("lock_resource", { name: "bench:uncontended", agent_id: "b" });
      await d.call("unlock_resource", { name: "bench:uncontended", lock_token: l.lock_token });
      return performance.now() - t0;
    }),
  );
  add({ mode, metric: "lock+unlock, uncontended (p50)", value: lockUnlock, unit: "ms", baseline: "2 pings", baselineValue: 2 * ping });

  const lags: number[] = [];
  const pings: number[] = [];
  const syncs: number[] = [];
  let holder = await d.call("lock_resource", { name: "bench:handoff", agent_id: "h0" });
  for (let i = 0; i < (QUICK ? 30 : 100); i++) {
    const waiter = d.call("lock_resource", { name: "bench:handoff", agent_id: `h${i + 1}`, wait_seconds: 50 });
    while (!(await d.call("list_locks")).find((l: any) => l.name === "bench:handoff")?.waiters?.[0]?.blocked) await Bun.sleep(1);
    const p0 = performance.now();
    await d.rpc("ping");
    pings.push(performance.now() - p0);
    syncs.push(fsyncs.once());
    const t0 = performance.now();
    void d.call("unlock_resource", { name: "bench:handoff", lock_token: holder.lock_token });
    holder = await waiter;
    lags.push(performance.now() - t0);
  }
  fsyncs.close();
  add({ mode, metric: "hand-off, release → waiter answered (p50)", value: median(lags), unit: "ms", baseline: "1 ping", baselineValue: median(pings) });
  add({ mode, metric: "hand-off, release → waiter answered (p99)", value: pct(lags, 99), unit: "ms", baseline: "1 ping", baselineValue: median(pings) });
  // The floor of any call that writes: one round trip, plus one fsync when answers wait for it.
  const floor = median(cyclePings) + median(cycleSyncs);
  const handOffFloor = median(pings) + median(syncs);
  if (mode === "full") add({ mode, metric: "fsync: 4 KiB write + fdatasync (p50, paired)", value: median(cycleSyncs), unit: "ms" });
  add({ mode, metric: "floor: 1 ping (+ 1 fsync under full)", value: floor, unit: "ms" });
  add({ mode, metric: "lock hand-off vs its floor (p50)", value: median(lags), unit: "ms", baseline: "floor (paired ping + fsync)", baselineValue: handOffFloor });
  add({ mode, metric: "lock+unlock vs 2 floors (p50)", value: lockUnlock, unit: "ms", baseline: "2 floors (paired ping + fsync)", baselineValue: 2 * floor });
  return { ping, floor, lockUnlock };
}

/** Pools: acquire+release against the lock figure, hand-off and offer latency, and a crowded line. */
async function pools(d: DaemonProcess, mode: string, base: { ping: number; floor: number }) {
  const n = QUICK ? 200 : 1000;
  // Alternately with a lock+unlock, so both see the same moment of the machine.
  const [lockPaired, slot] = await paired(
    n,
    async () => {
      const l = await d.call("lock_resource", { name: "bench:paired", agent_id: "b" });
      await d.call("unlock_resource", { name: "bench:paired", lock_token: l.lock_token });
    },
    async () => {
      const s = await d.call("acquire_slot", { agent_id: "b", reason: "bench" });
      await d.call("release_slot", { slot_token: s.slot_token });
    },
  );
  add({ mode, metric: "acquire_slot+release_slot, uncontended (p50)", value: slot, unit: "ms", baseline: "lock+unlock, paired", baselineValue: lockPaired });
  add({ mode, metric: "acquire_slot+release_slot vs 2 floors (p50)", value: slot, unit: "ms", baseline: "2 floors", baselineValue: 2 * base.floor });

  // Hand-off: a blocked acquire answered after the holder's release.
  const lags: number[] = [];
  let held = await d.call("acquire_slot", { agent_id: "p0" });
  for (let i = 0; i < (QUICK ? 30 : 100); i++) {
    const next = d.call("acquire_slot", { agent_id: `p${i + 1}`, wait_seconds: 50 });
    while (!(await d.call("list_pools")).find((p: any) => p.pool === "heavy")?.waiters?.[0]?.blocked) await Bun.sleep(1);
    const t0 = performance.now();
    void d.call("release_slot", { slot_token: held.slot_token });
    held = await next;
    lags.push(performance.now() - t0);
  }
  await d.call("release_slot", { slot_token: held.slot_token });
  add({ mode, metric: "slot hand-off, release → blocked acquire answered (p50)", value: median(lags), unit: "ms", baseline: "floor", baselineValue: base.floor });

  // Offer: the request is away when capacity frees; its next call claims the offer.
  const offers: number[] = [];
  for (let i = 0; i < (QUICK ? 30 : 100); i++) {
    const h = await d.call("acquire_slot", { agent_id: "holder" });
    const q = await d.call("acquire_slot", { agent_id: "away" });
    const t0 = performance.now();
    await d.call("release_slot", { slot_token: h.slot_token });
    const got = await d.call("acquire_slot", { agent_id: "away", wake_token: q.wake_token });
    offers.push(performance.now() - t0);
    if (!got.granted) throw new Error("offer not claimed");
    await d.call("release_slot", { slot_token: got.slot_token });
  }
  add({ mode, metric: "offer: release → absent request's next call granted (p50)", value: median(offers), unit: "ms", baseline: "2 floors", baselineValue: 2 * base.floor });

  // A crowded line: 4 pools × 50 agents queued (200 requests), each pool held. A queued agent's
  // poll and a full acquire+release cycle there, against the same in an empty pool.
  const poll = async (pool: string, agent: string, wake: string) => d.call("acquire_slot", { agent_id: agent, pool, wake_token: wake });
  for (const pool of ["crowd-0", "crowd-1", "crowd-2", "crowd-3", "empty"]) {
    await d.call("configure_pool", { pool, capacity: 1, expected_version: 0, author: "bench", reason: "bench" });
  }
  const wakes: Record<string, string> = {};
  for (let p = 0; p < 4; p++) {
    await d.call("acquire_slot", { agent_id: "crowd-holder", pool: `crowd-${p}` });
    for (let a = 0; a < 50; a++) wakes[`crowd-${p}:${a}`] = (await d.call("acquire_slot", { agent_id: `agent-${a}`, pool: `crowd-${p}`, reason: "queued" })).wake_token;
  }
  await d.call("acquire_slot", { agent_id: "crowd-holder", pool: "empty" });
  const emptyWake = (await d.call("acquire_slot", { agent_id: "agent-49", pool: "empty" })).wake_token;
  const reps = QUICK ? 200 : 1000;
  const [inEmpty, inCrowd] = await paired(reps, () => poll("empty", "agent-49", emptyWake), () => poll("crowd-2", "agent-49", wakes["crowd-2:49"]!));
  add({ mode, metric: "queued poll, 200 requests over 50 agents (p50)", value: inCrowd, unit: "ms", baseline: "same poll, empty pool", baselineValue: inEmpty });
  // A new request joining the tail of a 50-long line, then withdrawing (release_slot with its wake_token).
  const join = async (pool: string) => {
    const q = await d.call("acquire_slot", { agent_id: "joiner", pool });
    await d.call("release_slot", { slot_token: q.wake_token });
  };
  const [joinEmpty, joinCrowd] = await paired(reps, () => join("empty"), () => join("crowd-1"));
  add({ mode, metric: "join+withdraw, 200 requests over 50 agents (p50)", value: joinCrowd, unit: "ms", baseline: "same, empty pool", baselineValue: joinEmpty });
}

/** How late a blocked waiter gets the lock after its holder's TTL or heartbeat deadline. */
async function expiryLags(d: DaemonProcess, mode: string, ping: number) {
  const reps = QUICK ? 2 : 5;
  for (const kind of ["TTL", "presence"] as const) {
    const lags: number[] = [];
    for (let i = 0; i < reps; i++) {
      const name = `bench:expiry:${kind}:${i}`;
      const agent = `exp-${kind}-${i}`;
      const t0 = performance.now();
      if (kind === "presence") await d.call("register_agent", { agent_id: agent, ttl_seconds: 1 });
      const held = await d.call("lock_resource", { name, agent_id: agent, ttl_seconds: kind === "TTL" ? 1 : 900 });
      const deadline = (t0 + performance.now()) / 2 + 1000; // the grant happened between these two
      if (!held.locked) throw new Error("expected the lock");
      const got = await d.call("lock_resource", { name, agent_id: "waiter", wait_seconds: 5 });
      if (!got.locked) throw new Error(`waiter not handed the lock after ${kind} expiry`);
      lags.push(performance.now() - deadline);
    }
    add({ mode, metric: `lag after ${kind} expiry (median of ${reps})`, value: median(lags), unit: "ms", baseline: "1 ping", baselineValue: ping });
  }
}

async function rates(d: DaemonProcess, mode: string, concurrency = CONCURRENCY) {
  const out: Record<string, Record<number, number>> = {};
  for (const c of concurrency) {
    const [ping, inc, note] = await throughputs(c, SECONDS, [
      () => d.rpc("ping"),
      () => d.call("increment_counter", { name: "bench:counter" }),
      (cl, i) => d.call("set_note", { key: `bench:note:${cl}:${i % 50}`, value: "x".repeat(64) }),
    ]);
    add({ mode, metric: `ping rate, ${c} clients`, value: ping!, unit: "ops/s" });
    add({ mode, metric: `increment_counter, ${c} clients`, value: inc!, unit: "ops/s", baseline: `ping rate, ${c} clients`, baselineValue: ping! });
    add({ mode, metric: `set_note, ${c} clients`, value: note!, unit: "ops/s", baseline: `ping rate, ${c} clients`, baselineValue: ping! });
    out.increment_counter = { ...out.increment_counter, [c]: inc! };
    out.set_note = { ...out.set_note, [c]: note! };
  }
  return out;
}

async function memory(d: DaemonProcess, mode: string) {
  await Bun.sleep(200);
  const idle = rssMiB(d.proc.pid);
  const total = QUICK ? 20_000 : 100_000;
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < total; i = next++) {
        const n = i % 10_000;
        if (i % 3 === 0) await d.call("set_note", { key: `mem:note:${n}`, value: "v" });
        else if (i % 3 === 1) await d.call("increment_counter", { name: `mem:counter:${n}` });
        else {
          const l = await d.call("lock_resource", { name: `mem:lock:${n}`, agent_id: "m" });
          if (l.locked) await d.call("unlock_resource", { name: `mem:lock:${n}`, lock_token: l.lock_token });
        }
      }
    }),
  );
  const after = rssMiB(d.proc.pid);
  add({ mode, metric: "RSS at idle", value: idle, unit: "MiB" });
  add({ mode, metric: `RSS after ${total} ops over 10000 names`, value: after, unit: "MiB", baseline: "RSS at idle", baselineValue: idle });
}

/** The kernel's floor: flock(2) acquire+release, and hand-off between two processes. */
async function flockFloor(ping: number) {
  const file = join(mkdtempSync(join(tmpdir(), "airlock-flock-")), "lock");
  writeFileSync(file, "");
  const fd = openSync(file, "r");
  const n = 100_000;
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    flock(fd, LOCK_EX);
    flock(fd, LOCK_UN);
  }
  add({ metric: "flock(2) acquire+release", value: (performance.now() - t) / n, unit: "ms", baseline: "1 ping", baselineValue: ping });

  const child = Bun.spawn([process.execPath, join(import.meta.dir, "flock-child.ts"), file], { stdin: "pipe", stdout: "pipe" });
  const reader = child.stdout.getReader();
  const dec = new TextDecoder();
  let buf = "";
  const line = async () => {
    while (!buf.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("flock child exited");
      buf += dec.decode(value);
    }
    const l = buf.slice(0, buf.indexOf("\n"));
    buf = buf.slice(buf.indexOf("\n") + 1);
    return l;
  };
  const lags: number[] = [];
  for (let i = 0; i < (QUICK ? 20 : 100); i++) {
    flock(fd, LOCK_EX);
    child.stdin.write("go\n");
    await child.stdin.flush();
    await line(); // "waiting": it is about to block
    await Bun.sleep(2);
    const t0 = monotonicNs();
    flock(fd, LOCK_UN);
    const t1 = BigInt(await line());
    lags.push(Number(t1 - t0) / 1e6);
  }
  child.kill();
  add({ metric: "flock(2) hand-off between processes (p50)", value: median(lags), unit: "ms", baseline: "1 ping", baselineValue: ping });
}

// The journal adds a few µs to a call of a few hundred: less than the difference the scheduler
// makes between two identical daemons on 2 cores (an A/A run, both daemons journaling, reads
// 0.78× to 1.04× per pair when they float, 1.00× to 1.01× when pinned). So, where taskset(1)
// exists, the bench pins itself to the first CPU and both daemons to the last one while it
// measures the journal, and takes the median of a few fresh pairs of daemons.
const JOURNAL_PAIRS = QUICK ? 1 : 3;

/**
 * What the journal adds to a write call: the same calls, alternately, on a daemon that journals
 * and on one started with AIRLOCK_JOURNAL=off (a bench-only switch), both under `mode`; the
 * median of JOURNAL_PAIRS fresh pairs of daemons. Target: at most 10% on a write call.
 */
async function journalCost(mode: string) {
  const unpin = pinSelf();
  const daemonCpu = cpus().length - 1;
  const inc: [number, number][] = [];
  const lu: [number, number][] = [];
  try {
    for (let p = 0; p < JOURNAL_PAIRS; p++) {
      const on = await startDaemon({ args: ["--durability", mode] });
      const off = await startDaemon({ args: ["--durability", mode], env: { AIRLOCK_JOURNAL: "off" } });
      try {
        if (unpin) for (const d of [on, off]) pinTo(d.proc.pid, daemonCpu);
        await warmUp(on);
        await warmUp(off);
        const n = QUICK ? 300 : 1500;
        inc.push(
          await paired(
            n,
            () => on.call("increment_counter", { name: "bench:journal" }),
            () => off.call("increment_counter", { name: "bench:journal" }),
          ),
        );
        const lockUnlock = (d: DaemonProcess) => async () => {
          const l = await d.call("lock_resource", { name: "bench:journal", agent_id: "b" });
          await d.call("unlock_resource", { name: "bench:journal", lock_token: l.lock_token });
        };
        lu.push(await paired(n, lockUnlock(on), lockUnlock(off)));
      } finally {
        await on.kill();
        await off.kill();
      }
    }
  } finally {
    unpin?.();
  }
  const baseline = `journal off${unpin ? ", pinned" : ""}${JOURNAL_PAIRS > 1 ? `, median of ${JOURNAL_PAIRS} pairs` : ""}`;
  const [incOn, incOff] = medianPair(inc);
  add({ mode, metric: "increment_counter, journal on (p50)", value: incOn, unit: "ms", baseline, baselineValue: incOff });
  const [luOn, luOff] = medianPair(lu);
  add({ mode, metric: "lock+unlock, journal on (p50)", value: luOn, unit: "ms", baseline, baselineValue: luOff });
  const spread = (pairs: [number, number][]) => pairs.map(([a, b]) => `${(a / b).toFixed(2)}×`).join(" ");
  console.error(`journal cost, ${mode}: increment_counter ${spread(inc)}; lock+unlock ${spread(lu)}`);
}

const started = performance.now();
const summary: Record<string, unknown> = {};
let firstPing = 0;
for (const mode of MODES) {
  if (ONLY === "journal") {
    await journalCost(mode);
    continue;
  }
  if (ONLY === "paths" || ONLY === "goals" || ONLY === "eras" || ONLY === "messages" || ONLY === "worktrees") {
    const d = await startDaemon({ args: ["--durability", mode] });
    try {
      if (ONLY === "paths") await pathFigures(d, mode, add, QUICK);
      else if (ONLY === "messages") await messageFigures(d, mode, add, QUICK);
      else if (ONLY === "worktrees") await worktreeFigures(d, mode, add, QUICK);
      else if (ONLY === "eras") {
        await warmUp(d);
        await eraFigures(d, mode, add, QUICK);
      } else {
        await latencies(d, mode);
        summary[mode] = await rates(d, mode, [64]);
      }
    } finally {
      await d.kill();
    }
    continue;
  }
  const d = await startDaemon({ args: ["--durability", mode] });
  try {
    const base = await latencies(d, mode);
    const ping = base.ping;
    firstPing ||= ping;
    await pools(d, mode, base);
    await pathFigures(d, mode, add, QUICK);
    await eraFigures(d, mode, add, QUICK);
    await messageFigures(d, mode, add, QUICK);
    await worktreeFigures(d, mode, add, QUICK);
    await expiryLags(d, mode, ping);
    summary[mode] = await rates(d, mode);
    await memory(d, mode);
  } finally {
    await d.kill();
  }
  await journalCost(mode);
}
if (ONLY === undefined) await flockFloor(firstPing);

if (summary.normal && summary.full) {
  const n = (summary.normal as any).increment_counter[64];
  const f = (summary.full as any).increment_counter[64];
  add({ metric: "FULL+group commit vs NORMAL, increment_counter at 64 clients", value: f, unit: "ops/s", baseline: "NORMAL, 64 clients", baselineValue: n });
}

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(4));
const table = [
  "| mode | metric | value | baseline | ratio |",
  "| --- | --- | ---: | --- | ---: |",
  ...rows.map((r) => `| ${r.mode ?? ""} | ${r.metric} | ${fmt(r.value)} ${r.unit} | ${r.baseline ?? ""} | ${r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}×`} |`),
].join("\n");
console.log(table);
// The issue's three goals, each a ratio to its floor measured in the same run.
const GOALS: { metric: string; goal: string; met: (ratio: number) => boolean }[] = [
  { metric: "lock hand-off vs its floor (p50)", goal: "≤ 1.5×", met: (r) => r <= 1.5 },
  { metric: "lock+unlock vs 2 floors (p50)", goal: "≤ 1.25×", met: (r) => r <= 1.25 },
  { metric: "increment_counter, 64 clients", goal: "≥ 0.5× the ping rate", met: (r) => r >= 0.5 },
  { metric: "increment_counter, 2026-07-28 era (p50)", goal: "≤ 1.05× the 2025 era", met: (r) => r <= 1.05 },
];
const goalRows = GOALS.flatMap((g) => rows.filter((r) => r.metric === g.metric && r.ratio !== undefined).map((r) => ({ g, r })));
if (goalRows.length > 0) {
  console.log("\n| mode | goal | ratio | target | |\n| --- | --- | ---: | --- | --- |");
  for (const { g, r } of goalRows) console.log(`| ${r.mode} | ${g.metric} | ${r.ratio!.toFixed(2)}× | ${g.goal} | ${g.met(r.ratio!) ? "met" : "missed"} |`);
}
console.log(`\n${cpus().length} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, bun ${Bun.version}; ${((performance.now() - started) / 1000).toFixed(0)} s`);
// A partial run (--only) prints its rows but leaves the full run's results in place.
if (ONLY === undefined) {
  writeFileSync(join(import.meta.dir, "results.json"), JSON.stringify({ date: new Date().toISOString(), bun: Bun.version, cpus: cpus().length, quick: QUICK, rows }, null, 2));
  writeFileSync(join(import.meta.dir, "results.svg"), renderChart(rows.filter((r) => r.ratio !== undefined)));
}

// Issue 11's bench (bench/cluster.ts) needs a PostgreSQL server; it adds its rows to
// results.json under "cluster", after the write above.
if (ONLY === undefined) {
  if (process.env.AIRLOCK_TEST_PG) {
    console.log("\nPostgreSQL store (bench/cluster.ts):");
    const code = await Bun.spawn([process.execPath, join(import.meta.dir, "cluster.ts"), ...(QUICK ? ["--quick"] : [])], { stdio: ["ignore", "inherit", "inherit"] }).exited;
    if (code !== 0) process.exitCode = code;
  } else console.log("\nbench/cluster.ts (the PostgreSQL store) skipped: AIRLOCK_TEST_PG is not set");
}
