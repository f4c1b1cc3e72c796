// Crash loop: one database and home, a daemon killed with SIGKILL at random moments and
// restarted on them, while concurrent clients keep working. Whatever the daemon acknowledged
// must survive every crash: no acknowledged increment lost or repeated, no fence reused, no two
// acknowledged holders of one lock at once, no acknowledged task lost or completed twice. A
// call that fails because the daemon died has an unknown outcome; the client counts it, waits
// for the next daemon, and goes on.
import { Database } from "bun:sqlite";
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { type DaemonProcess, startDaemon, tempHome } from "../helpers/daemon.ts";
import { type LockAnswer, prng, requestLock, taskViolations } from "./support.ts";

setDefaultTimeout(90_000);

const SEED = Number(process.env.RELIABILITY_SEED ?? Date.now() % 1_000_000);
const KILLS = 20;
const UPTIME_MS: [number, number] = [150, 500]; // how long each daemon lives before its kill -9
const INCREMENTERS = 2;
const LOCKERS = 3;
const CONSUMERS = 2; // plus one producer: 8 client loops in all
const LOCK_NAMES = ["res-a", "res-b", "res-c"];
const LOCK_TTL_S = 1; // short, so a grant whose answer was lost to a crash frees itself soon
const LEASE_S = 2; // the same for a claim whose answer was lost
const MAX_ABANDONED = 5; // grants left to expire (each stalls its name for a TTL)
const TASKS = 300;
const QUEUE = "crash-q";
// The daemon's deadlines are whole milliseconds of the wall clock (Date.now()); the client
// measures with performance.now(). Comparisons of the two allow for that much disagreement.
const CLOCK_SLACK_MS = 5;
// Far above any legitimate answer (the longest wait is 1 s): a call that takes this long while
// its daemon is alive means the daemon hung.
const CALL_TIMEOUT_MS = 10_000;

const started: DaemonProcess[] = [];
afterAll(async () => {
  for (const d of started) await d.kill(9);
});

/** The daemon of the moment; `gen` counts kills, so a failed call can tell whether its daemon died. */
class Cluster {
  d: DaemonProcess | null = null;
  gen = 0;
  private waiting: (() => void)[] = [];

  async live(): Promise<{ d: DaemonProcess; gen: number }> {
    while (!this.d) await new Promise<void>((r) => this.waiting.push(r));
    return { d: this.d, gen: this.gen };
  }

  up(d: DaemonProcess): void {
    this.d = d;
    for (const r of this.waiting.splice(0)) r();
  }
}

type Outcome<T> = { ok: true; value: T; sentAt: number; ackAt: number; gen: number } | { ok: false };

interface Tally {
  unknown: Record<string, number>;
  /** Calls that failed although their daemon was not being killed, and tool errors. */
  unexpected: string[];
}

function makeCaller(cluster: Cluster, tally: Tally) {
  return async function attempt<T = any>(tool: string, args: Record<string, unknown>): Promise<Outcome<T>> {
    const { d, gen } = await cluster.live();
    const sentAt = performance.now();
    try {
      const value = await d.call(tool, args, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
      const ackAt = performance.now();
      if (value?.isError) {
        tally.unexpected.push(`${tool} ${JSON.stringify(args)} → ${JSON.stringify(value)}`);
        return { ok: false };
      }
      return { ok: true, value, sentAt, ackAt, gen };
    } catch (err) {
      tally.unknown[tool] = (tally.unknown[tool] ?? 0) + 1;
      if (cluster.gen === gen) {
        tally.unexpected.push(`${tool} failed while its daemon was alive: ${String(err)}`);
        await Bun.sleep(20);
      }
      return { ok: false };
    }
  };
}

type Durability = "full" | "normal";

interface LockGrant {
  name: string;
  fence: number;
  sentAt: number;
  ackAt: number;
  releaseSentAt: number;
  /** Kills before the grant was asked for and after it was answered (for the report). */
  genSent: number;
  genAck: number;
  agent: string;
}

async function crashLoop(durability: Durability): Promise<void> {
  const rnd = prng(SEED);
  const home = tempHome();
  const args = ["--durability", durability];
  const first = await startDaemon({ home, args });
  started.push(first);
  const db = first.db;
  const cluster = new Cluster();
  cluster.up(first);
  const tally: Tally = { unknown: {}, unexpected: [] };
  const attempt = makeCaller(cluster, tally);
  let stop = false;

  // Increments: each client owns counter c:<client>; it is the only writer, so its
  // acknowledged values must rise strictly in the order it got them.
  const acked: number[][] = Array.from({ length: INCREMENTERS }, () => []);
  const incAttempts = Array.from({ length: INCREMENTERS }, () => 0);
  const incrementer = async (c: number) => {
    while (!stop) {
      incAttempts[c]!++;
      const r = await attempt<{ value: number }>("increment_counter", { name: `c:${c}` });
      if (r.ok) acked[c]!.push(r.value.value);
    }
  };

  // Locks: grab one of a few names (waiting up to 1 s), hold it briefly, release it.
  const grants: LockGrant[] = [];
  const refusedReleases: { grant: LockGrant; ackAt: number }[] = [];
  let lockDenied = 0;
  let abandoned = 0;
  const locker = async (c: number) => {
    const r = prng(SEED + 1000 + c);
    while (!stop) {
      const name = r.pick(LOCK_NAMES);
      const g = await requestLock(attempt<LockAnswer>, name, `locker-${c}`, LOCK_TTL_S, () => lockDenied++);
      if (!g) continue;
      const grant: LockGrant = { name, fence: g.value.fence, sentAt: g.sentAt, ackAt: g.ackAt, releaseSentAt: Number.POSITIVE_INFINITY, genSent: g.gen, genAck: cluster.gen, agent: `locker-${c}` };
      grants.push(grant);
      if (abandoned < MAX_ABANDONED && r.chance(0.03)) {
        // Walk away without releasing: the lock frees at its TTL, by the timer of whichever
        // daemon is alive then (re-armed from the database after a restart).
        abandoned++;
        continue;
      }
      await Bun.sleep(r.int(0, 15));
      grant.releaseSentAt = performance.now();
      const u = await attempt<{ released: boolean }>("unlock_resource", { name, lock_token: g.value.lock_token });
      if (u.ok && !u.value.released) refusedReleases.push({ grant, ackAt: u.ackAt });
    }
  };

  // Tasks: one producer with unique payloads (a retry after an unknown outcome gets a new
  // payload, so every task in the queue can be traced to one attempt), consumers on short leases.
  const pushed = new Map<number, string>(); // acknowledged id → payload
  const pushAcks: { id: number; payload: string }[] = [];
  const unknownPayloads = new Set<string>();
  const completedAcks = new Map<number, number>();
  const claimsSeen = new Map<number, number>();
  const staleCompletes: { sentAt: number; ackAt: number; claimSentAt: number }[] = [];
  let unknownCompletes = 0;
  let reusedIds = 0; // an id acknowledged twice would mean an acknowledged push was lost
  const producer = async () => {
    for (let i = 0; i < TASKS && !stop; i++) {
      for (let a = 0; ; a++) {
        const payload = `task-${i}.${a}`;
        const r = await attempt<{ id: number }>("push_task", { queue: QUEUE, payload, author: "producer" });
        if (r.ok) {
          if (pushed.has(r.value.id)) reusedIds++;
          pushed.set(r.value.id, payload);
          pushAcks.push({ id: r.value.id, payload });
          break;
        }
        unknownPayloads.add(payload);
      }
      await Bun.sleep(rnd.int(5, 20));
    }
  };
  const consumeOne = async (agent: string, waitSeconds: number): Promise<boolean> => {
    const c = await attempt<{ claimed: boolean; id: number; lease_token: string }>("claim_next_task", {
      queue: QUEUE,
      agent_id: agent,
      lease_seconds: LEASE_S,
      wait_seconds: waitSeconds,
    });
    if (!c.ok || !c.value.claimed) return false;
    claimsSeen.set(c.value.id, (claimsSeen.get(c.value.id) ?? 0) + 1);
    const done = await attempt<{ completed: boolean }>("complete_task", { id: c.value.id, lease_token: c.value.lease_token });
    if (!done.ok) unknownCompletes++;
    else if (done.value.completed) completedAcks.set(c.value.id, (completedAcks.get(c.value.id) ?? 0) + 1);
    else staleCompletes.push({ sentAt: done.sentAt, ackAt: done.ackAt, claimSentAt: c.sentAt });
    return true;
  };
  const consumer = async (c: number) => {
    const r = prng(SEED + 2000 + c);
    while (!stop) {
      if (await consumeOne(`consumer-${c}`, 1)) await Bun.sleep(r.int(0, 10));
    }
  };

  const loops = [
    ...Array.from({ length: INCREMENTERS }, (_, c) => incrementer(c)),
    ...Array.from({ length: LOCKERS }, (_, c) => locker(c)),
    producer(),
    ...Array.from({ length: CONSUMERS }, (_, c) => consumer(c)),
  ];

  // The killer.
  const t0 = performance.now();
  const restarts: { killedAt: number; upAt: number }[] = [];
  for (let k = 0; k < KILLS; k++) {
    await Bun.sleep(rnd.int(...UPTIME_MS));
    const victim = cluster.d!;
    cluster.gen++;
    cluster.d = null;
    const killedAt = Math.round(performance.now() - t0);
    victim.proc.kill("SIGKILL");
    await victim.proc.exited;
    expect(victim.proc.signalCode).toBe("SIGKILL");
    const next = await startDaemon({ home, db, args });
    started.push(next);
    expect(next.token).toBe(first.token); // the same token file, reused
    restarts.push({ killedAt, upAt: Math.round(performance.now() - t0) });
    cluster.up(next);
  }
  const loopMs = performance.now() - t0;
  stop = true;
  await Promise.all(loops);

  // Drain with the last daemon: leases taken by calls whose answers were lost lapse within
  // LEASE_S and requeue; keep claiming until nothing is pending or claimed.
  const d = cluster.d!;
  const drainDeadline = performance.now() + 20_000;
  let listed: { id: number; payload: string; state: string }[] = [];
  for (;;) {
    while (await consumeOne("drainer", 0));
    listed = await d.call("list_tasks", { queue: QUEUE });
    if (listed.every((t) => t.state === "done" || t.state === "failed")) break;
    if (performance.now() > drainDeadline) break;
    await Bun.sleep(100);
  }

  // ---- Increments.
  const violations: string[] = []; // every broken invariant, reported together after the figures
  let incAcked = 0;
  let incLost = 0;
  let incRepeated = 0;
  let incUnknown = 0;
  for (let c = 0; c < INCREMENTERS; c++) {
    const values = acked[c]!;
    const final = (await d.call("increment_counter", { name: `c:${c}`, by: 0 })).value as number;
    const unknown = incAttempts[c]! - values.length;
    incAcked += values.length;
    incUnknown += unknown;
    incRepeated += values.length - new Set(values).size;
    // An acknowledged value above the final one was lost in a crash.
    incLost += values.filter((v) => v > final).length;
    // One writer, one call at a time: acknowledged values rise strictly in the order received.
    const falls = values.filter((v, i) => i > 0 && v <= values[i - 1]!).length;
    if (falls > 0) violations.push(`c:${c}: ${falls} acknowledged values not above the one before`);
    // Every acknowledged call applied once; of the unknown ones, any number from none to all.
    if (final < values.length || final - values.length > unknown) violations.push(`c:${c}: final ${final} with ${values.length} acknowledged and ${unknown} unknown`);
  }
  if (incRepeated > 0) violations.push(`${incRepeated} acknowledged increments repeated`);
  if (incLost > 0) violations.push(`${incLost} acknowledged increments lost`);

  // ---- Locks.
  let fenceRepeats = 0;
  let overlaps = 0;
  let orderViolations = 0;
  for (const name of LOCK_NAMES) {
    const mine = grants.filter((g) => g.name === name);
    fenceRepeats += mine.length - new Set(mine.map((g) => g.fence)).size;
    const byFence = [...mine].sort((a, b) => a.fence - b.fence);
    for (let i = 1; i < byFence.length; i++) {
      const a = byFence[i - 1]!;
      const b = byFence[i]!;
      // A later fence is acknowledged after an earlier one: the earlier grant was answered
      // before its holder released it (or before it expired), and only then could b be granted.
      if (!(b.ackAt > a.ackAt)) orderViolations++;
      // b was answered before a's holder even asked to release, and before a's TTL could have
      // run out (its grant happened after a.sentAt): both held the lock at once. (A b blocked
      // behind an abandoned a is handed the lock by the expiry timer, often to the millisecond.)
      if (b.ackAt < a.releaseSentAt && b.ackAt < a.sentAt + LOCK_TTL_S * 1000 - CLOCK_SLACK_MS) {
        overlaps++;
        const show = (g: LockGrant) => ({ ...g, sentAt: Math.round(g.sentAt - t0), ackAt: Math.round(g.ackAt - t0), releaseSentAt: Math.round(g.releaseSentAt - t0) });
        const between = restarts.filter((x) => x.upAt >= a.sentAt - t0 && x.killedAt <= b.ackAt - t0);
        violations.push(`overlap on ${name}: ${JSON.stringify(show(a))} then ${JSON.stringify(show(b))}; restarts between ${JSON.stringify(between)}`);
      }
    }
  }
  if (fenceRepeats + overlaps + orderViolations > 0) violations.push(`locks: ${fenceRepeats} fences repeated, ${overlaps} overlaps, ${orderViolations} fences out of order`);
  // A release is refused only when the lock's TTL ran out first (its grant came after sentAt).
  const earlyRefusals = refusedReleases.filter(({ grant, ackAt }) => ackAt - grant.sentAt < LOCK_TTL_S * 1000 - CLOCK_SLACK_MS).length;
  if (earlyRefusals > 0) violations.push(`${earlyRefusals} releases refused before the lock's TTL could have run out`);

  // ---- Tasks.
  const tasks = taskViolations({ listed, pushAcks, unknownPayloads, completedAcks, unknownCompletes, staleCompletes, reusedIds, leaseS: LEASE_S, clockSlackMs: CLOCK_SLACK_MS });
  violations.push(...tasks.violations);
  const reclaimed = [...claimsSeen.values()].filter((n) => n > 1).length;
  violations.push(...tally.unexpected);

  // ---- A clean stop, then the file itself.
  const exit = await d.kill("SIGTERM");
  if (exit !== 0) violations.push(`SIGTERM exit code ${exit}`);
  const check = new Database(db, { readonly: true });
  let integrity: string;
  try {
    integrity = (check.query("PRAGMA integrity_check").all() as { integrity_check: string }[]).map((r) => r.integrity_check).join("; ");
  } finally {
    check.close();
  }
  if (integrity !== "ok") violations.push(`integrity_check: ${integrity}`);

  console.log(
    `crash loop (durability ${durability}, seed ${SEED}): ${KILLS} kills in ${(loopMs / 1000).toFixed(1)} s; ` +
      `${incAcked} increments acknowledged, ${incUnknown} unknown outcome, ${incLost} lost, ${incRepeated} repeated; ` +
      `${grants.length} lock grants (${abandoned} left to expire, ${lockDenied} waits timed out, ${refusedReleases.length} releases after TTL), ${overlaps} overlaps, ${fenceRepeats} fences repeated, ${orderViolations} out of order; ` +
      `${pushAcks.length} tasks acknowledged (${unknownPayloads.size} pushes unknown), ${tasks.tasksLost} lost, ${tasks.duplicatedCompletions} duplicated completions, ` +
      `${listed.length} listed, ${tasks.done} done, ${reclaimed} claimed more than once, ${unknownCompletes} completes unknown; ` +
      `unknown outcomes by tool ${JSON.stringify(tally.unknown)}; integrity_check ${integrity}`,
  );
  expect(violations).toEqual([]);
}

// Both durability modes: "full" answers after the fsync; "normal" after the write reaches the
// WAL, which a crash of the daemon (not of the machine) cannot undo either.
for (const durability of ["full", "normal"] as const) {
  test(`${KILLS} kill -9 restarts under concurrent load lose nothing acknowledged (durability ${durability}, seed ${SEED})`, () => crashLoop(durability));
}
