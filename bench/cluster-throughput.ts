// The throughput part of bench/cluster.ts (issue 21): does adding daemons on one PostgreSQL
// database add throughput? 32 concurrent clients call increment_counter over keep-alive HTTP
// (the test helper's `call`), on distinct counters (each client its own) and on one hot counter
// (all of them the same), against 1, 2 and 3 daemons, each setup on a fresh database of its own
// with the clients spread round-robin over its daemons. The floor is PostgreSQL's own: 32
// connections (Bun's SQL client, one per client) sending single-row UPDATE transactions straight
// to the server, one row per client, or one shared row for the hot case, in two forms: the whole
// transaction as one simple query ("BEGIN; UPDATE ...; COMMIT", literals inlined: one round trip),
// and Bun's sql.begin around the UPDATE (BEGIN, UPDATE, COMMIT: three). Both are timed; the
// daemons' ratios are taken against the higher of the two (the stricter floor), named in the row.
// All five setups run side by side (the idle ones only beat their heartbeat, once a second, on
// their own database), and every round times each of them in turn, the order rotating from one
// round to the next, so that all see the same moments of a shared machine. A warm-up round each,
// then the median of three rounds of a fixed length.
// A third case, distinct locks, has each client take and release a lock of its own
// (lock_resource, then unlock_resource, nobody ever in line: row bodies on a shared store), on
// the daemon setups only: it asks whether lock calls scale with daemons the way counters do,
// in pairs a second, against one daemon. A fourth, task cycles, has each client push a task to a
// queue of its own, claim it (wait_seconds 0) and complete it: with no claimer waiting, row
// bodies too. A fifth, counter and look, has each client increment its counter and then look at
// the change feed for its own changes (watch_changes with wait_seconds 0 from the revision it
// was last answered, its counter's name as resource_prefix): a feed poller beside the writers.
// A sixth, check, has each client ask check_paths of a path of its own in one room, as every edit
// hook does, beside a claim held there by nobody among them. A seventh, edit, has each client do
// what an edit hook does: check_paths of its path, then report_worktree of its checkout (the
// same report every time after the first); edits, the same with a new file at every edit, so
// that each report changes something (a row body since "Working-tree reports beside the order"
// in docs/cluster.md, a line body before). An eighth, watched, is the distinct counters with one
// watch_changes blocked on each daemon, of a kind nobody records: what a long-polling reader of
// the feed costs the writers beside it (docs/cluster.md, "Watchers beside row bodies"). Polled
// is the same with watchers that want every change the clients make, each polling again as soon
// as it is answered (a live log, a dashboard, on each daemon: "Watchers off the stored lines"). A tenth,
// claims, has each client claim a path of its own and release it (two line bodies) while a
// worker waits on an empty queue on each daemon: what a blocked call elsewhere costs line bodies.
// An eleventh, messages, has each client (a registered agent) send a message to its own inbox,
// read it (read_messages, wait_seconds 0) and ack it: an inbox's round trip, three calls. A
// twelfth, status, is the distinct counters with one dashboard on each daemon: a loop asking
// for the status snapshot (`airlock/status`, what /ui/api/status answers) 50 ms after its last
// answer, as an open page does while changes keep coming (src/ui/app.ts, DEBOUNCE_MS).
// Nothing is pinned here: three daemons must be able to use both cores, and the bench's client
// side (fetch's HTTP thread, the SQL client) floats with them.
// The clients run in the bench process, not in spawned client processes: on 2 cores a client
// process takes its CPU from the daemons all the same, and one more event loop per process only
// adds to it. What could make the clients the bottleneck is the bench's one JavaScript thread; its
// CPU time over each round is read from /proc (the main thread alone) and reported: a round in
// which it was busy more than CLIENT_BUSY of the time is flagged as possibly client-bound.
// Each round also prints the CPU spent per successful operation by the daemons, by the PostgreSQL
// server's processes and by the bench process (utime + stime from /proc): where the cost of a call
// goes, and how it grows with the number of daemons (docs/cluster.md, "The model").
import { SQL } from "bun";
import { existsSync, readFileSync } from "node:fs";
import type { DaemonProcess, StartOptions } from "../test/helpers/daemon.ts";
import { median, postgresCpuMs, processCpuMs, processSwitches, statCpuMs, threadCpuMs } from "./stats.ts";

export const CLIENTS = 32;
const ROUNDS = 3;
/** The main thread's busy share above which a round may be measuring the client, not the server. */
const CLIENT_BUSY = 0.8;
/** The watched case's watchers' wait, a long poll's: the case waits at most this long for them to end. */
const WATCH_S = 20;
/** The status case's dashboards ask again this long after an answer (the page's debounce, src/ui/app.ts). */
const STATUS_AFTER_MS = 50;
/** The setups before the daemons': the floor's two forms. */
const FLOORS = 2;

export type ThroughputRow = {
  metric: string;
  value: number;
  unit: string;
  baseline?: string;
  baselineValue?: number;
  mode?: string;
  part?: string;
  rounds?: number;
  /** Failed calls (or transactions) over the timed rounds, and how many rounds had any. */
  errors?: number;
  roundsWithErrors?: number;
  /** The bench's JavaScript thread's busiest share of a round (0–1). */
  clientBusy?: number;
};

export const CASES = ["distinct", "hot", "locks", "tasks", "feed", "check", "edit", "edits", "watched", "polled", "claims", "messages", "beats", "deliver", "stops", "status"] as const;
export type Case = (typeof CASES)[number];
/** The cases timed on the daemon setups only, in cycles of several calls. */
type CycleCase = Exclude<Case, "distinct" | "hot">;
const isCycle = (k: Case): k is CycleCase => k !== "distinct" && k !== "hot";
/** A setup under load: one client's operation, true when it succeeded. */
type Target = {
  name: string;
  op(kase: Case, client: number): Promise<boolean>;
  /** Before a case's first round and after its last (untimed): what it needs beside its clients (the watched case's watchers). */
  prepare?(kase: Case): Promise<void>;
  finish?(kase: Case): Promise<void>;
  /** The daemons' processes, whose CPU a round reports per operation. */
  pids?: number[];
};
/**
 * CPU per successful operation (µs) over a round: the daemons' (none for a floor), the PostgreSQL
 * server's, the bench's; and how often per operation the daemons' threads were preempted (switched
 * out while they could run: more runnable than cores) and went to sleep to wait.
 */
type CpuPerOp = { daemons: number | undefined; postgres: number; bench: number; preempted?: number; slept?: number; threads?: Map<string, number> };
type Round = { rate: number; errors: number; busy: number; machine: number; cpu: CpuPerOp };

const MAIN_STAT = `/proc/self/task/${process.pid}/stat`;

/** CPU time of this process's main thread (the JavaScript one), ms; of the whole process without /proc. */
function mainThreadCpuMs(): number {
  if (!existsSync(MAIN_STAT)) {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
  return statCpuMs(MAIN_STAT);
}

/**
 * The whole machine's CPU time so far (every core, /proc/stat's first line): busy and in all, in
 * ticks; null without /proc. A round's share of busy time says whether the cores were the limit
 * (docs/cluster.md, "The model"): with every core busy, more daemons on this machine cannot add.
 */
function machineTicks(): { busy: number; all: number } | null {
  if (!existsSync("/proc/stat")) return null;
  const f = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const all = f.reduce((a, b) => a + b, 0);
  return { busy: all - f[3]! - f[4]!, all }; // less idle and iowait
}

/**
 * Starts counting what a round's processes spend (docs/cluster.md, "The model": the cost of a
 * call, by process); the function it returns, called at the round's end, gives it per operation.
 */
function cpuMeter(t: Target): (ops: number) => CpuPerOp {
  const pids = t.pids ?? [];
  const d0 = pids.map(processCpuMs);
  const s0 = pids.map(processSwitches);
  const t0 = threadsOf(pids);
  const p0 = postgresCpuMs();
  const b0 = processCpuMs(process.pid);
  return (ops) => {
    // A backend that came during the round counts whole; one that went counts nothing.
    let pg = 0;
    for (const [pid, ms] of postgresCpuMs()) pg += ms - (p0.get(pid) ?? 0);
    const per = (ms: number) => (ms * 1000) / Math.max(ops, 1);
    const s1 = pids.map(processSwitches);
    const switches = (k: "voluntary" | "involuntary") => s1.reduce((sum, s, i) => sum + s[k] - s0[i]![k], 0) / Math.max(ops, 1);
    const threads = new Map<string, number>();
    for (const [name, ms] of threadsOf(pids)) threads.set(name, per(ms - (t0.get(name) ?? 0)));
    return {
      ...(pids.length ? { preempted: switches("involuntary"), slept: switches("voluntary"), threads } : {}),
      daemons: pids.length ? per(pids.reduce((sum, pid, i) => sum + processCpuMs(pid) - d0[i]!, 0)) : undefined,
      postgres: per(pg),
      bench: per(processCpuMs(process.pid) - b0),
    };
  };
}

/** The daemons' threads that spent at least 1 µs a call, busiest first: "; by thread: bun 40, JITWorker 3 µs". */
function threadLine(threads: Map<string, number> | undefined): string {
  const busy = [...(threads ?? [])].filter(([, us]) => us >= 1).sort((a, b) => b[1] - a[1]);
  return busy.length ? `; by thread: ${busy.map(([n, us]) => `${n} ${us.toFixed(0)}`).join(", ")} µs` : "";
}

/** The daemons' CPU so far by thread name, all daemons summed (a thread gone meanwhile leaves its share out). */
function threadsOf(pids: number[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of pids) for (const [name, ms] of threadCpuMs(pid)) out.set(name, (out.get(name) ?? 0) + ms);
  return out;
}

/** CLIENTS concurrent loops of op for ms: the successful operations per second. */
async function round(t: Target, kase: Case, ms: number): Promise<Round> {
  let count = 0;
  let errors = 0;
  const cpu0 = mainThreadCpuMs();
  const m0 = machineTicks();
  const meter = cpuMeter(t);
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      while (performance.now() < end) {
        const ok = await t.op(kase, c).catch(() => false);
        if (ok) count++;
        else {
          errors++;
          await Bun.sleep(10); // a failing setup must not spin the bench's thread
        }
      }
    }),
  );
  const took = performance.now() - t0;
  const m1 = machineTicks();
  const machine = m0 && m1 && m1.all > m0.all ? (m1.busy - m0.busy) / (m1.all - m0.all) : Number.NaN;
  return { rate: count / (took / 1000), errors, busy: (mainThreadCpuMs() - cpu0) / took, machine, cpu: meter(count) };
}

function daemons(ds: DaemonProcess[]): Target {
  const name = (kase: Case, c: number) => (kase === "hot" ? "bench:tput:hot" : `bench:tput:${c}`);
  /** How many edits each client made (the edits case: a new file each). */
  const edited = new Map<number, number>();
  /** Each client's place in the change feed (the feed case). */
  const since = new Map<number, number>();
  /** The blocked calls of the watched and claims cases, one on each daemon, and whether they are to stop. */
  let watchers: Promise<void>[] = [];
  let stop = false;
  return {
    name: `${ds.length} daemon${ds.length > 1 ? "s" : ""}`,
    pids: ds.map((d) => d.proc.pid),
    async prepare(kase) {
      if (kase === "messages" || kase === "beats") {
        // A recipient must be seen, and a heartbeat is a live agent's: each client is a
        // registered agent, on its own daemon.
        for (let c = 0; c < CLIENTS; c++) await ds[c % ds.length]!.call("register_agent", { agent_id: `bench-tput-${c}`, ttl_seconds: 3600 });
        return;
      }
      if (kase !== "watched" && kase !== "polled" && kase !== "claims" && kase !== "status") return;
      stop = false;
      watchers = ds.map(async (d, i) => {
        if (kase === "status") {
          while (!stop) {
            const r = await d.rpc("airlock/status");
            if (r.error || typeof r.result?.revision !== "number") throw new Error(`a dashboard's status failed: ${JSON.stringify(r.error)}`);
            await Bun.sleep(STATUS_AFTER_MS);
          }
          return;
        }
        if (kase === "claims") {
          // A worker waiting on a queue nobody pushes to, as a team has some.
          while (!stop) {
            const t = await d.call("claim_next_task", { queue: "bench:tput:idle", agent_id: `bench-idle-${i}`, wait_seconds: WATCH_S });
            if (t.isError || t.claimed !== false) throw new Error(`a waiting worker failed: ${JSON.stringify(t)}`);
          }
          return;
        }
        // Watched: a watcher of a kind nobody records, it wants none of the clients' changes.
        // Polled: one that wants them all, and is answered at almost every change.
        const wants = kase === "polled" ? { kinds: ["counter."], resource_prefix: "bench:tput:" } : { kinds: ["bench.never."] };
        // From the newest revision (a look for a kind nobody records answers where the run of
        // revisions ends; a look from 0 would answer the journal's first page, and a watcher
        // wanting everything would read the earlier cases' history, a page a call).
        let from = (await d.call("watch_changes", { kinds: ["bench.never."] })).revision as number;
        while (!stop) {
          const w = await d.call("watch_changes", { since_revision: from, ...wants, wait_seconds: kase === "polled" ? 1 : WATCH_S });
          if (w.isError || typeof w.revision !== "number") throw new Error(`a watcher failed: ${JSON.stringify(w)}`);
          from = w.revision;
        }
      });
      await Bun.sleep(200); // blocked by now
    },
    async finish(kase) {
      if (kase !== "watched" && kase !== "polled" && kase !== "claims" && kase !== "status") return;
      stop = true;
      await Promise.all(watchers);
      watchers = [];
    },
    op: async (kase, c) => {
      const d = ds[c % ds.length]!;
      if (kase === "locks") {
        const g = await d.call("lock_resource", { name: `bench:tput:lock:${c}`, agent_id: `bench-tput-${c}`, ttl_seconds: 60 });
        if (g.isError || g.locked !== true) return false;
        return (await d.call("unlock_resource", { name: `bench:tput:lock:${c}`, lock_token: g.lock_token })).released === true;
      }
      if (kase === "tasks") {
        const queue = `bench:tput:queue:${c}`;
        const p = await d.call("push_task", { queue, payload: "x" });
        if (p.isError) return false;
        const t = await d.call("claim_next_task", { queue, agent_id: `bench-tput-${c}`, wait_seconds: 0 });
        if (t.isError || t.claimed !== true) return false;
        return (await d.call("complete_task", { id: t.id, lease_token: t.lease_token })).completed === true;
      }
      if (kase === "claims") {
        const g = await d.call("claim_paths", { agent_id: `bench-tput-${c}`, room: "bench-claims", paths: [`src/c${c}/**`], ttl_seconds: 60 });
        if (g.isError || g.granted !== true) return false;
        return (await d.call("release_paths", { claim_token: g.claim_token })).released === true;
      }
      if (kase === "messages") {
        const agent = `bench-tput-${c}`;
        const sent = await d.call("send_message", { from: agent, to: [agent], body: "x" });
        if (sent.isError) return false;
        const r = await d.call("read_messages", { agent_id: agent });
        if (r.isError || r.messages?.[0]?.id !== sent.message_id) return false;
        return (await d.call("ack_message", { agent_id: agent, message_id: sent.message_id })).acked === true;
      }
      if (kase === "beats") {
        const r = await d.call("register_agent", { agent_id: `bench-tput-${c}`, ttl_seconds: 3600 });
        return !r.isError && r.registered === true;
      }
      if (kase === "deliver" || kase === "stops") {
        // What an agent's hook asks at each tool boundary (or at the end of each turn): its
        // inbox, nothing waiting there (nothing to hold the stop for).
        const r = await d.rpc("airlock/deliver", { agent_id: `bench-tput-${c}`, point: kase === "stops" ? "stop" : "tool" });
        return r.error === undefined && Array.isArray(r.result?.messages) && r.result.messages.length === 0;
      }
      if (kase === "check" || kase === "edit" || kase === "edits") {
        // edits: a file of its own at every edit, so the report changes something each time.
        const n = (edited.get(c) ?? 0) + 1;
        if (kase === "edits") edited.set(c, n);
        const path = kase === "edits" ? `src/c${c}/f${n}.ts` : `src/c${c}/index.ts`;
        const r = await d.call("check_paths", { paths: [path], room: "bench-tput", agent_id: `bench-tput-${c}` });
        if (r.isError || r.clear !== true) return false;
        if (kase === "check") return true;
        // What the edit hook sends next: the checkout, the same at every edit after the first
        // (edit), or with this edit's file its one dirty and touched path (edits).
        const t = await d.call("report_worktree", { agent_id: `bench-tput-${c}`, room: "bench-tput", branch: "main", dirty: [path], touched: [path] });
        return !t.isError && t.dirty_count === 1;
      }
      if (kase === "feed") {
        const counter = `bench:tput:feed:${c}:`;
        const r = await d.call("increment_counter", { name: counter });
        if (r.isError) return false;
        const w = await d.call("watch_changes", { since_revision: since.get(c) ?? 0, kinds: ["counter."], resource_prefix: counter, limit: 100 });
        if (w.isError || typeof w.revision !== "number") return false;
        since.set(c, w.revision);
        return true;
      }
      // distinct, hot, watched, polled and status (distinct counters beside the watchers or dashboards)
      const r = await d.call("increment_counter", { name: name(kase, c) });
      return !r.isError && typeof r.value === "number";
    },
  };
}

/** The floor's two forms, on a database of its own; they share its connections (one runs at a time). */
async function floors(url: string): Promise<{ targets: Target[]; close(): Promise<void> }> {
  const setup = new SQL(url, { max: 1 });
  await setup`CREATE TABLE airlock_bench_tput (id int PRIMARY KEY, n bigint NOT NULL)`;
  // Rows 0..CLIENTS-1, one per client; row CLIENTS is the hot one.
  await setup`INSERT INTO airlock_bench_tput SELECT g, 0 FROM generate_series(0, ${CLIENTS}) g`;
  await setup.close();
  const conns = Array.from({ length: CLIENTS }, () => new SQL(url, { max: 1 }));
  const row = (kase: Case, c: number) => (kase === "hot" ? CLIENTS : c);
  // One simple query each (no parameters, so no extended protocol): the server runs all three.
  const text = (id: number) => `BEGIN; UPDATE airlock_bench_tput SET n = n + 1 WHERE id = ${id}; COMMIT`;
  const texts = { distinct: conns.map((_, c) => text(c)), hot: conns.map(() => text(CLIENTS)) };
  const oneQuery: Target = {
    name: "floor, one query",
    op: async (kase, c) => {
      await conns[c]!.unsafe(texts[kase === "hot" ? "hot" : "distinct"][c]!);
      return true;
    },
  };
  const begin: Target = {
    name: "floor, sql.begin",
    op: async (kase, c) => {
      await conns[c]!.begin(async (tx) => {
        await tx`UPDATE airlock_bench_tput SET n = n + 1 WHERE id = ${row(kase, c)}`;
      });
      return true;
    },
  };
  return { targets: [oneQuery, begin], close: async () => void (await Promise.all(conns.map((s) => s.close()))) };
}

export type ThroughputOptions = {
  startDaemon(o: StartOptions): Promise<DaemonProcess>;
  freshDatabase(): Promise<{ url: string; drop(): Promise<void> }>;
  add(r: ThroughputRow): void;
  /** Length of a timed round and of the warm-up round, ms. */
  roundMs: number;
  warmUpMs: number;
  /**
   * Before the first case, each daemon setup serves the distinct counters this long per daemon
   * in it (so each of three daemons serves about as many calls as one alone), ms: a daemon's
   * JIT compiles its hot code over its first tens of thousands of calls, and three daemons,
   * each with a third of the calls, would still be compiling in their timed rounds
   * (docs/cluster.md, "What sharing the cores costs"). A daemon in use runs for hours.
   */
  jitWarmUpMs?: number;
  /** The cases to time (all of them by default). */
  cases?: readonly Case[];
};

/** Runs the part and adds its rows: per case, the two floors, 1–3 daemons against the higher, 2 and 3 against 1. */
export async function throughput(o: ThroughputOptions): Promise<void> {
  const dbs: { url: string; drop(): Promise<void> }[] = [];
  const started: DaemonProcess[] = [];
  let base: Awaited<ReturnType<typeof floors>> | undefined;
  try {
    const fresh = async () => {
      const db = await o.freshDatabase();
      dbs.push(db);
      return db.url;
    };
    base = await floors(await fresh());
    const setups: Target[] = [...base.targets];
    for (const n of [1, 2, 3]) {
      const url = await fresh();
      const ds: DaemonProcess[] = [];
      // One after another: the first creates the schema the others find.
      for (let i = 0; i < n; i++) ds.push(await o.startDaemon({ db: url }));
      started.push(...ds);
      // The one claim the check case's room holds (none of its clients' paths overlaps it).
      const held = await ds[0]!.call("claim_paths", { paths: ["docs/**"], room: "bench-tput", agent_id: "bench-tput-holder", ttl_seconds: 3600 });
      if (held.granted !== true) throw new Error(`the check case's claim was refused: ${JSON.stringify(held)}`);
      setups.push(daemons(ds));
    }
    for (const t of setups.slice(FLOORS)) if (o.jitWarmUpMs) await round(t, "distinct", o.jitWarmUpMs * (t.pids?.length ?? 1));
    for (const kase of o.cases ?? CASES) {
      const timed = isCycle(kase) ? setups.slice(FLOORS) : setups;
      const got = timed.map(() => [] as Round[]);
      for (const t of timed) await t.prepare?.(kase);
      try {
        for (const t of timed) await round(t, kase, o.warmUpMs);
        for (let r = 0; r < ROUNDS; r++) {
          for (let i = 0; i < timed.length; i++) {
            const k = (i + r) % timed.length;
            const x = await round(timed[k]!, kase, o.roundMs);
            got[k]!.push(x);
            const flag = x.errors ? `, ${x.errors} FAILED` : "";
            const c = x.cpu;
            const cpu = `CPU per op: ${c.daemons === undefined ? "" : `daemons ${c.daemons.toFixed(0)} µs, `}PostgreSQL ${c.postgres.toFixed(0)} µs, bench ${c.bench.toFixed(0)} µs${c.preempted === undefined ? "" : `; the daemons preempted ${c.preempted.toFixed(2)} and asleep ${c.slept!.toFixed(2)} times a call`}${threadLine(c.threads)}`;
            console.error(`throughput ${kase}, ${timed[k]!.name}, round ${r + 1}: ${x.rate.toFixed(0)}/s${flag}, bench thread ${(x.busy * 100).toFixed(0)}% busy, machine ${(x.machine * 100).toFixed(0)}% busy, ${cpu}`);
          }
        }
      } finally {
        await Promise.all(timed.map((t) => t.finish?.(kase)));
      }
      if (isCycle(kase)) reportCycles(o.add, kase, timed, got, o.roundMs);
      else report(o.add, kase, setups, got, o.roundMs);
    }
  } finally {
    await Promise.all(started.map((d) => d.kill()));
    await base?.close();
    for (const db of dbs) await db.drop();
  }
}

function report(add: (r: ThroughputRow) => void, kase: Case, setups: Target[], got: Round[][], roundMs: number) {
  const what = kase === "hot" ? "one hot counter" : "distinct counters";
  const of = `median of ${ROUNDS} × ${(roundMs / 1000).toFixed(1)} s`;
  const row = rowOf(got);
  const common = { mode: "postgres", part: "throughput" };
  const rows = [0, 1].map(row);
  const forms = ["one query (BEGIN; UPDATE; COMMIT in one simple query)", "sql.begin (BEGIN, UPDATE, COMMIT: three round trips)"];
  for (let k = 0; k < FLOORS; k++) {
    const f = rows[k]!;
    add({ ...common, metric: `floor: ${CLIENTS} connections, ${forms[k]}, direct, ${kase === "hot" ? "one shared row" : "one row each"} (${of})${f.flag}`, value: f.value, unit: "tx/s", ...f.extra });
  }
  // The stricter floor: the higher of the two, named in every row measured against it.
  const hi = rows[0]!.value >= rows[1]!.value ? 0 : 1;
  const floorName = `floor, ${what}, ${setups[hi]!.name.replace("floor, ", "")} (the higher)`;
  const floorValue = rows[hi]!.value;
  const one = row(FLOORS);
  for (let k = FLOORS; k < setups.length; k++) {
    const d = row(k);
    add({ ...common, metric: `increment_counter, ${CLIENTS} clients, ${what}, ${setups[k]!.name} (${of})${d.flag}`, value: d.value, unit: "ops/s", baseline: floorName, baselineValue: floorValue, ...d.extra });
  }
  for (let k = FLOORS + 1; k < setups.length; k++) {
    const d = row(k);
    add({ ...common, metric: `${what}: ${setups[k]!.name} vs 1 daemon${d.flag}${one.flag}`, value: d.value, unit: "ops/s", baseline: "1 daemon", baselineValue: one.value });
  }
}

/** The lock pairs, the task cycles, or the counters with a look: 1–3 daemons, and 2 and 3 against 1. */
function reportCycles(add: (r: ThroughputRow) => void, kase: CycleCase, setups: Target[], got: Round[][], roundMs: number) {
  const labels: Record<CycleCase, [what: string, short: string, unit: string]> = {
    locks: ["lock_resource + unlock_resource, " + `${CLIENTS} clients, distinct locks`, "distinct locks", "pairs/s"],
    tasks: ["push_task + claim_next_task + complete_task, " + `${CLIENTS} clients, a queue each`, "task cycles", "cycles/s"],
    feed: ["increment_counter + watch_changes (wait 0, its own changes), " + `${CLIENTS} clients, a counter each`, "counter and look", "pairs/s"],
    check: ["check_paths, " + `${CLIENTS} clients, a path each in one room with one claim`, "path checks", "checks/s"],
    edit: ["check_paths + report_worktree (an edit hook's two calls), " + `${CLIENTS} clients, a path each`, "edits", "edits/s"],
    edits: ["check_paths + report_worktree that changes something (an edit hook's two calls, a new file each edit), " + `${CLIENTS} clients`, "edits that change the report", "edits/s"],
    watched: ["increment_counter, " + `${CLIENTS} clients, distinct counters, one watch_changes blocked on each daemon wanting none of them`, "distinct counters, watched", "ops/s"],
    polled: ["increment_counter, " + `${CLIENTS} clients, distinct counters, one watch_changes on each daemon wanting all of them, polling again at once`, "distinct counters, polled", "ops/s"],
    claims: ["claim_paths + release_paths, " + `${CLIENTS} clients, a path each in one room, one claim_next_task blocked on each daemon`, "path claims with a worker waiting", "pairs/s"],
    status: ["increment_counter, " + `${CLIENTS} clients, distinct counters, one dashboard on each daemon asking for the status 50 ms after each answer`, "distinct counters, dashboards open", "ops/s"],
    messages: ["send_message + read_messages (wait 0) + ack_message, " + `${CLIENTS} clients, each its own inbox`, "inbox round trips", "cycles/s"],
    beats: ["register_agent (a live agent's heartbeat), " + `${CLIENTS} clients, an agent each`, "heartbeats", "beats/s"],
    deliver: ["airlock/deliver at a tool boundary (the hooks' inbox delivery, nothing waiting), " + `${CLIENTS} clients, an agent each`, "hook deliveries", "deliveries/s"],
    stops: ["airlock/deliver at a stop (the end of a turn, nothing to hold it for), " + `${CLIENTS} clients, an agent each`, "hook stops", "stops/s"],
  };
  const [what, short, unit] = labels[kase];
  const of = `median of ${ROUNDS} × ${(roundMs / 1000).toFixed(1)} s`;
  const row = rowOf(got);
  const common = { mode: "postgres", part: "throughput" };
  const one = row(0);
  for (let k = 0; k < setups.length; k++) {
    const d = row(k);
    add({ ...common, metric: `${what}, ${setups[k]!.name} (${of})${d.flag}`, value: d.value, unit, ...d.extra });
  }
  for (let k = 1; k < setups.length; k++) {
    const d = row(k);
    add({ ...common, metric: `${short}: ${setups[k]!.name} vs 1 daemon${d.flag}${one.flag}`, value: d.value, unit, baseline: "1 daemon", baselineValue: one.value });
  }
}

/** One setup's rounds: the median rate, its flags, and the extra fields of its row. */
function rowOf(got: Round[][]) {
  return (k: number) => {
    const rs = got[k]!;
    const errors = rs.reduce((s, r) => s + r.errors, 0);
    const roundsWithErrors = rs.filter((r) => r.errors > 0).length;
    const clientBusy = Math.max(...rs.map((r) => r.busy));
    const flags = [
      ...(errors ? [`${errors} failed in ${roundsWithErrors} of ${ROUNDS} rounds`] : []),
      ...(clientBusy > CLIENT_BUSY ? [`bench thread ${(clientBusy * 100).toFixed(0)}% busy: client-bound?`] : []),
    ];
    return { value: median(rs.map((r) => r.rate)), flag: flags.length ? ` [${flags.join("; ")}]` : "", extra: { rounds: ROUNDS, errors, roundsWithErrors, clientBusy, machineBusy: median(rs.map((r) => r.machine)) } };
  };
}
