// Faults in a cluster of two daemons on one PostgreSQL database (docs/cluster.md, "Faults"):
// a daemon killed with SIGKILL under load, and the PostgreSQL server restarted under load.
// What must hold through both: no acknowledged write is lost, no lock ever has two holders,
// the surviving daemon answers every call, a dead daemon's blocked waiters are never granted,
// and during an outage a call either succeeds or says "store unavailable" (retryable), never
// a wrong answer. Each test prints its figures on one line. Skipped without a server
// (AIRLOCK_TEST_PG); the restart test also needs the server's directory (AIRLOCK_TEST_PG_DIR,
// the DIR of `.ci/pg.sh start DIR`): it restarts that server, so never point it at a shared one.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../../src/errors.ts";
import { type DaemonProcess, ROOT } from "../helpers/daemon.ts";
import { answered, type Cluster, doubleGrants, type Hold, journalValues, seeded, startCluster } from "../helpers/cluster.ts";
import { describePg, PG_URL } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(45_000);

/** What docs/cluster.md gives a daemon before its silence makes it dead (src/domain/cluster.ts). */
const DEAD_AFTER_MS = 5000;
// The presence and lock TTLs that free the dead daemon's agents' locks: they end after the kill
// plus DEAD_AFTER_MS plus a heartbeat period and some slack, so by then d2 is known dead and its
// blocked waiters count as detached (before that, a grant to one of them is handed back instead).
const LAPSE_S = 10;
/** A bound on "answered at all" (not a latency budget): far above a hand-off's milliseconds. */
const ANSWERED_WITHIN_MS = 6000;
/** How long a daemon may take to answer normally again after the server is back. */
const RECOVERY_MS = 10_000;
/** The load's lock TTL: a hold whose release never arrived (its daemon died) ends by then. */
const LOAD_LOCK_TTL_S = 5;


/**
 * A tool call's outcome as a client sees it through a fault: an answer; "store unavailable"
 * (retryable, nothing done); the same with the outcome unknown (it may have been done); or
 * anything else (an HTTP or connection failure, another error), which the caller judges.
 */
type Outcome = { kind: "ok"; value: any } | { kind: "retry"; text: string } | { kind: "unknown"; text: string } | { kind: "failed"; text: string };

async function attempt(d: DaemonProcess, tool: string, args: Record<string, unknown>): Promise<Outcome> {
  let text: string;
  try {
    const r = await d.call(tool, args);
    if (!r.isError) return { kind: "ok", value: r };
    text = JSON.stringify(r);
  } catch (err) {
    text = errorMessage(err);
  }
  if (!/store unavailable/.test(text)) return { kind: "failed", text };
  return /unknown/.test(text) ? { kind: "unknown", text } : { kind: "retry", text };
}

/** The daemons' log lines that say something failed (at most max), to explain a wrong answer. */
function failureLines(c: Cluster, max = 12): string[] {
  return c.daemons
    .flatMap((d, i) => d.output().split("\n").map((line) => `d${i + 1}| ${line}`))
    .filter((line) => /error|failed|\bat /i.test(line))
    .slice(0, max);
}


/** Acknowledged values that repeat, and those the journal does not have. */
function checkCounter(acked: readonly number[], recorded: readonly number[]) {
  const seen = new Set<number>();
  const repeated: number[] = [];
  for (const v of acked) {
    if (seen.has(v)) repeated.push(v);
    seen.add(v);
  }
  const kept = new Set(recorded);
  const lost = acked.filter((v) => !kept.has(v));
  return { repeated, lost };
}

interface LockerOptions {
  d: () => DaemonProcess;
  name: string;
  agent: string;
  ttlS: number;
  waitS: number;
  holds: Hold[];
  problems: string[];
  /** Whether to go on. */
  running: () => boolean;
  /** Whether a failure on this daemon is expected now (it was killed): the locker then stops. */
  gone?: () => boolean;
  sleep: () => number;
}

/**
 * One agent taking and releasing a lock in a loop, recording each hold from the answers. A
 * release that says "retry" did nothing and is retried; one whose outcome is unknown may have
 * freed the lock, so the hold ends at that attempt (it is retried until it says something).
 */
async function locker(o: LockerOptions): Promise<{ calls: number; retries: number; unknown: number }> {
  const n = { calls: 0, retries: 0, unknown: 0 };
  const fail = (what: string, text: string) => {
    if (!o.gone?.()) o.problems.push(`${o.agent}: ${what}: ${text.slice(0, 200)}`);
  };
  while (o.running()) {
    const asked = performance.now();
    n.calls++;
    const got = await attempt(o.d(), "lock_resource", { name: o.name, agent_id: o.agent, ttl_seconds: o.ttlS, wait_seconds: o.waitS });
    const from = performance.now();
    if (got.kind === "failed") {
      fail("lock_resource", got.text);
      if (o.gone?.()) return n;
      continue;
    }
    if (got.kind === "retry") {
      n.retries++;
      await Bun.sleep(20);
      continue;
    }
    if (got.kind === "unknown") {
      // The lock may be ours with a token we never saw: release it by agent_id (v1's path).
      n.unknown++;
      for (;;) {
        const r = await attempt(o.d(), "unlock_resource", { name: o.name, agent_id: o.agent });
        if (r.kind === "ok") break;
        if (r.kind === "failed") {
          fail("unlock_resource by agent_id", r.text);
          if (o.gone?.()) return n;
        }
        await Bun.sleep(20);
      }
      continue;
    }
    if (!got.value.locked) continue;
    const hold: Hold = { name: o.name, agent: o.agent, fence: got.value.fence, from, to: asked + o.ttlS * 1000, asked };
    o.holds.push(hold);
    await Bun.sleep(o.sleep());
    let mayHaveReleased = false;
    for (;;) {
      const sent = performance.now();
      n.calls++;
      const r = await attempt(o.d(), "unlock_resource", { name: o.name, lock_token: got.value.lock_token });
      if (r.kind !== "retry" && !mayHaveReleased) hold.to = Math.min(hold.to, sent);
      if (r.kind === "ok") {
        if (r.value.released === true) hold.released = performance.now();
        else if (!mayHaveReleased) o.problems.push(`${o.agent}: unlock of its lock (fence ${hold.fence}) answered ${JSON.stringify(r.value)}`);
        break;
      }
      if (r.kind === "failed") {
        fail("unlock_resource", r.text);
        if (o.gone?.()) return n;
        mayHaveReleased = true;
      }
      if (r.kind === "unknown") mayHaveReleased = true;
      if (r.kind === "retry") n.retries++;
      await Bun.sleep(20);
    }
  }
  return n;
}

describePg("kill -9 of one daemon under load", () => {
  test("d1 answers every call; no acknowledged increment is lost; no double grant; d2's agents' locks free at their lapse and go to d1's waiters, never d2's", async () => {
    const rng = seeded("kill -9 under load");
    const c: Cluster = await startCluster(2);
    const [d1, d2] = c.daemons as [DaemonProcess, DaemonProcess];
    try {
      // Set-up: locks held by agents that talk to d2, each with a waiter blocked on d2 and,
      // behind it, one blocked on d1. One frees by presence, one by its own TTL.
      expect(await d2.call("register_agent", { agent_id: "mortal", ttl_seconds: LAPSE_S })).toMatchObject({ registered: true });
      const byPresence = await d2.call("lock_resource", { name: "by-presence", agent_id: "mortal", ttl_seconds: 600 });
      const byTtl = await d2.call("lock_resource", { name: "by-ttl", agent_id: "short-lived", ttl_seconds: LAPSE_S });
      expect([byPresence.locked, byTtl.locked]).toEqual([true, true]);
      const blockedOn = async (d: DaemonProcess, name: string, agent: string) =>
        ((await d.call("list_locks")) as { name: string; waiters: { agent_id: string; blocked: boolean }[] }[])
          .find((l) => l.name === name)
          ?.waiters.some((w) => w.agent_id === agent && w.blocked) ?? false;
      const deadWaiters = ["by-presence", "by-ttl"].map((name) => {
        const p = d2.call("lock_resource", { name, agent_id: `dead-waiter-${name}`, wait_seconds: 40 }).then(
          (r) => ({ answered: r as { locked?: boolean } }),
          (err: unknown) => ({ failed: errorMessage(err) }),
        );
        return { name, p };
      });
      for (const { name } of deadWaiters) await until(`d2's waiter on ${name} in line`, () => blockedOn(d2, name, `dead-waiter-${name}`));
      const liveWaiters = ["by-presence", "by-ttl"].map((name) => ({
        name,
        p: d1.call("lock_resource", { name, agent_id: `live-waiter-${name}`, wait_seconds: 40 }),
      }));
      // Marked handled: a test failing before it awaits them must not leave them unhandled.
      for (const { p } of liveWaiters) p.catch(() => undefined);
      for (const { name } of liveWaiters) await until(`d1's waiter on ${name} in line`, () => blockedOn(d1, name, `live-waiter-${name}`));

      // Who holds the two locks, as d1 sees it, all along: a dead waiter must never show up.
      const holders = new Set<string>();
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          try {
            for (const l of (await d1.call("list_locks")) as { name: string; agent_id: string }[]) if (l.name.startsWith("by-")) holders.add(`${l.name}:${l.agent_id}`);
          } catch (err) {
            if (watching) holders.add(`list_locks failed: ${errorMessage(err)}`);
          }
          await Bun.sleep(50);
        }
      })();

      // The load: counters and locks through both daemons, d2 killed in the middle of it.
      const killAfter = 500 + rng.int(500);
      const loadFor = killAfter + 1500;
      const started = performance.now();
      let killed = false;
      const running = () => performance.now() - started < loadFor;
      const acked: number[] = [];
      const problems: string[] = [];
      const holds: Hold[] = [];
      const calls = { d1: 0, d2: 0 };
      const counter = async (d: DaemonProcess, which: "d1" | "d2") => {
        while (running()) {
          calls[which]++;
          const r = await attempt(d, "increment_counter", { name: "load" });
          if (r.kind === "ok") acked.push(r.value.value);
          else if (which === "d2" && killed) return;
          else problems.push(`${which}: increment_counter: ${r.kind}: ${"text" in r ? r.text.slice(0, 200) : ""}`);
        }
      };
      const lockers = [d1, d2].flatMap((d, i) =>
        [0, 1].map((j) =>
          locker({
            d: () => d,
            name: `hot-${j}`,
            agent: `d${i + 1}-locker-${j}`,
            ttlS: LOAD_LOCK_TTL_S,
            waitS: 0,
            holds,
            problems,
            running,
            gone: i === 1 ? () => killed : undefined,
            sleep: () => rng.int(4),
          }),
        ),
      );
      const counters = [counter(d1, "d1"), counter(d1, "d1"), counter(d2, "d2"), counter(d2, "d2")];
      await Bun.sleep(killAfter);
      killed = true;
      await d2.kill(9);
      const lockerCounts = await Promise.all(lockers);
      await Promise.all(counters);
      calls.d1 += lockerCounts[0]!.calls + lockerCounts[1]!.calls;
      // The store never went away: d1 saying "store unavailable" is not answering either.
      for (const [i, n] of lockerCounts.slice(0, 2).entries()) {
        if (n.retries + n.unknown) problems.push(`d1-locker-${i}: ${n.retries + n.unknown} calls answered "store unavailable"`);
      }
      calls.d2 += lockerCounts[2]!.calls + lockerCounts[3]!.calls;

      // d2's waiters' calls died with it; the locks go to d1's waiters at their lapse. One not
      // answered in time is reported with the lock as d1 sees it then.
      const live = await Promise.all(
        liveWaiters.map(async ({ name, p }) => {
          try {
            const r = await answered(`d1's waiter on ${name}`, p, LAPSE_S * 1000 + ANSWERED_WITHIN_MS);
            return { name, locked: r.locked as boolean | string };
          } catch (err) {
            const entry = ((await d1.call("list_locks")) as { name: string }[]).find((l) => l.name === name);
            return { name, locked: `${errorMessage(err)}; d1's list_locks then: ${JSON.stringify(entry)}` };
          }
        }),
      );
      watching = false;
      await watcher;
      // One last look, after the answers: the watcher may have stopped before it saw the grants.
      for (const l of (await d1.call("list_locks")) as { name: string; agent_id: string }[]) if (l.name.startsWith("by-")) holders.add(`${l.name}:${l.agent_id}`);
      const dead = await Promise.all(deadWaiters.map(async ({ name, p }) => ({ name, ...(await p) })));

      const recorded = await journalValues(d1, "load");
      const { repeated, lost } = checkCounter(acked, recorded);
      const final = (await d1.call("increment_counter", { name: "load", by: 0 })).value as number;
      const doubles = doubleGrants(holds);
      console.log(
        `kill -9 under load (seed ${rng.seed}): faults injected 1 (d2 killed after ${killAfter} ms), calls d1 ${calls.d1} d2 ${calls.d2}, ` +
          `increments acknowledged ${acked.length}, acknowledged writes lost ${lost.length}, repeated values ${repeated.length}, ` +
          `lock holds ${holds.length}, double grants ${doubles.length}, d1 calls not answered ${problems.filter((p) => p.startsWith("d1")).length}`,
      );

      if (problems.length) console.log(`the daemons' logs:\n${failureLines(c).join("\n")}`);
      expect({ problems: problems.length, first: problems.slice(0, 3) }).toEqual({ problems: 0, first: [] });
      expect({ lost, repeated }).toEqual({ lost: [], repeated: [] });
      expect(final).toBeGreaterThanOrEqual(Math.max(acked.length, ...acked));
      expect({ doubleGrants: doubles.length, first: doubles.slice(0, 3) }).toEqual({ doubleGrants: 0, first: [] });
      expect(live.map(({ name, locked }) => ({ name, locked }))).toEqual([
        { name: "by-presence", locked: true },
        { name: "by-ttl", locked: true },
      ]);
      // The dead daemon's waiters: their calls failed with it, and they never held anything.
      for (const x of dead) expect({ name: x.name, answered: "answered" in x ? x.answered : undefined }).toEqual({ name: x.name, answered: undefined });
      expect([...holders].filter((h) => h.includes("dead-waiter"))).toEqual([]);
      expect([...holders]).toContain("by-presence:live-waiter-by-presence");
      expect([...holders]).toContain("by-ttl:live-waiter-by-ttl");
    } finally {
      await c.stop();
    }
  });
});

const PG_DIR = process.env.AIRLOCK_TEST_PG_DIR || undefined;
const describeRestart = PG_URL && PG_DIR ? describe : describe.skip;
if (PG_URL && !PG_DIR) console.log("faults: the PostgreSQL restart test is skipped: set AIRLOCK_TEST_PG_DIR to the DIR of `.ci/pg.sh start DIR`");

/** The server in PG_DIR must be the one PG_URL names: the test restarts it. */
function checkServerDir(): void {
  const port = readFileSync(join(PG_DIR!, "db", "postmaster.pid"), "utf8").split("\n")[3]?.trim();
  const want = new URL(PG_URL!).port || "5432";
  if (port !== want) throw new Error(`AIRLOCK_TEST_PG_DIR's server listens on port ${port}, AIRLOCK_TEST_PG names port ${want}: not the same server`);
}

async function restartServer(): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn([join(ROOT, ".ci/pg.sh"), "restart", PG_DIR!], { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`.ci/pg.sh restart failed (${code}): ${stderr}`);
  return performance.now() - t0;
}

describeRestart("PostgreSQL restart under load (needs AIRLOCK_TEST_PG_DIR)", () => {
  test("calls succeed or say 'store unavailable'; nothing acknowledged is lost; no double grant; both daemons answer again within seconds", async () => {
    checkServerDir();
    const rng = seeded("PostgreSQL restart under load");
    const RESTARTS = 2;
    const c: Cluster = await startCluster(2);
    const [d1, d2] = c.daemons as [DaemonProcess, DaemonProcess];
    try {
      let loading = true;
      const running = () => loading;
      const acked: number[] = [];
      const problems: string[] = [];
      const holds: Hold[] = [];
      const seen = { calls: 0, retryable: 0, unknown: 0 };
      const pick = () => (rng.int(2) ? d2 : d1);
      const counter = async (d: DaemonProcess) => {
        while (running()) {
          seen.calls++;
          const r = await attempt(d, "increment_counter", { name: "restart-counter" });
          if (r.kind === "ok") acked.push(r.value.value);
          else if (r.kind === "failed") problems.push(`increment_counter: ${r.text.slice(0, 200)}`);
          else {
            seen[r.kind === "retry" ? "retryable" : "unknown"]++;
            await Bun.sleep(20);
          }
        }
      };
      const lockers = Array.from({ length: 4 }, (_, i) =>
        locker({ d: pick, name: "restart-lock", agent: `locker-${i}`, ttlS: 10, waitS: 1, holds, problems, running, sleep: () => rng.int(5) }),
      );
      const counters = [counter(d1), counter(d1), counter(d2), counter(d2)];

      const outages: number[] = [];
      for (let i = 0; i < RESTARTS; i++) {
        await Bun.sleep(600 + rng.int(600));
        outages.push(await restartServer());
      }
      // Back: each daemon must answer a write normally within RECOVERY_MS.
      const backAt = performance.now();
      const recovery: number[] = [];
      for (const d of [d1, d2]) {
        await until(
          "a daemon answering normally after the restart",
          async () => (await attempt(d, "increment_counter", { name: "after-restart" })).kind === "ok",
          RECOVERY_MS,
          50,
        );
        recovery.push(performance.now() - backAt);
      }
      await Bun.sleep(500); // some load after the recovery as well
      loading = false;
      const lockCounts = await Promise.all(lockers);
      await Promise.all(counters);
      for (const n of lockCounts) {
        seen.calls += n.calls;
        seen.retryable += n.retries;
        seen.unknown += n.unknown;
      }

      const recorded = await journalValues(d1, "restart-counter");
      const { repeated, lost } = checkCounter(acked, recorded);
      const final = (await d2.call("increment_counter", { name: "restart-counter", by: 0 })).value as number;
      const doubles = doubleGrants(holds);
      console.log(
        `PostgreSQL restart under load (seed ${rng.seed}): restarts ${RESTARTS} (pg_ctl ${outages.map((t) => t.toFixed(0)).join(", ")} ms), ` +
          `calls ${seen.calls}, increments acknowledged ${acked.length}, lost ${lost.length}, repeated ${repeated.length}, final ${final}, ` +
          `lock holds ${holds.length}, double grants ${doubles.length}, retryable errors ${seen.retryable}, outcome unknown ${seen.unknown}, ` +
          `wrong answers ${problems.length}, answering again after ${recovery.map((t) => t.toFixed(0)).join(" / ")} ms`,
      );

      if (problems.length) console.log(`the daemons' logs:\n${failureLines(c).join("\n")}`);
      expect({ wrong: problems.length, first: problems.slice(0, 3) }).toEqual({ wrong: 0, first: [] });
      expect({ lost, repeated }).toEqual({ lost: [], repeated: [] });
      expect(final).toBeGreaterThanOrEqual(Math.max(acked.length, ...acked));
      expect({ doubleGrants: doubles.length, first: doubles.slice(0, 3) }).toEqual({ doubleGrants: 0, first: [] });
      expect(holds.length).toBeGreaterThan(0);
    } finally {
      await c.stop();
    }
  });
});
