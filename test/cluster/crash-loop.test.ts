// The crash loop (test/reliability/crash-loop.test.ts), extended to two daemons on one
// PostgreSQL database (docs/cluster.md, "Tests"): clients work through both daemons at once
// while one daemon at a time, chosen by a seeded generator, is killed with SIGKILL and
// restarted on the same database (a new process, a new port, a new daemon id; its clients
// switch to it). The same invariants, across both daemons: no acknowledged increment lost or
// repeated, no two acknowledged holders of one lock at once, fences never repeated and never
// going backwards, no acknowledged task lost, completed twice or claimed by two at once. A call
// whose daemon was killed under it has an unknown outcome: counted per tool, and the client
// goes on with the next daemon of its slot. A call to a daemon that was not killed must be
// answered, and answered without an error: PostgreSQL stays up throughout, so the surviving
// daemon never has a reason to say "store unavailable". Skipped without a server
// (AIRLOCK_TEST_PG); the seed is printed and AIRLOCK_TEST_SEED replays it.
import { expect, setDefaultTimeout, test } from "bun:test";
import { errorMessage } from "../../src/errors.ts";
import { type DaemonProcess, startDaemon } from "../helpers/daemon.ts";
import { type Cluster, doubleGrants, type Hold, journalValues, seeded, startCluster } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { type LockAnswer, prng, requestLock, taskViolations } from "../reliability/support.ts";

setDefaultTimeout(120_000);

const KILLS = 16;
const UPTIME_MS: [number, number] = [600, 1600]; // how long between one restart and the next kill -9
// Client loops per daemon slot (two slots): 14 in all.
const INCREMENTERS = 2;
const LOCKERS = 2;
const CONSUMERS = 2; // plus one producer per slot
const LOCK_NAMES = ["res-a", "res-b"]; // few names, so most grants are hand-offs, many across daemons
const LOCK_TTL_S = 1; // short, so a grant whose answer was lost to a crash frees itself soon
const LEASE_S = 2; // the same for a claim whose answer was lost
const MAX_ABANDONED = 5; // grants left to expire (each stalls its name for a TTL)
const PUSH_PAUSE_MS: [number, number] = [10, 50];
const QUEUE = "crash-q";
const COUNTER = "crash-counter"; // one counter, incremented through both daemons
// The daemon's deadlines are whole milliseconds of the wall clock (Date.now()); the client
// measures with performance.now(). Comparisons of the two allow for that much disagreement.
const CLOCK_SLACK_MS = 5;
// Far above any legitimate answer (the longest wait is 1 s): a call that takes this long while
// its daemon is alive means the daemon hung.
const CALL_TIMEOUT_MS = 10_000;
/** How long the drain may take: leases lost with a daemon lapse in LEASE_S; a dead daemon's grants go back after 5 s. */
const DRAIN_MS = 20_000;

/** One of the two daemons of the moment; `gen` counts its kills, so a failed call can tell whether its daemon died. */
class Slot {
  d: DaemonProcess | null;
  gen = 0;
  kills = 0;
  private waiting: (() => void)[] = [];

  constructor(
    readonly index: number,
    d: DaemonProcess,
  ) {
    this.d = d;
  }

  async live(): Promise<{ d: DaemonProcess; gen: number }> {
    while (!this.d) await new Promise<void>((r) => this.waiting.push(r));
    return { d: this.d, gen: this.gen };
  }

  /** The daemon is killed from now on: calls sent to it from here on have an unknown outcome. */
  down(): DaemonProcess {
    const victim = this.d!;
    this.gen++;
    this.kills++;
    this.d = null;
    return victim;
  }

  up(d: DaemonProcess): void {
    this.d = d;
    for (const r of this.waiting.splice(0)) r();
  }
}

type Outcome<T> = { ok: true; value: T; sentAt: number; ackAt: number } | { ok: false };

interface Tally {
  /** Calls whose daemon was killed under them, per tool. */
  unknown: Record<string, number>;
  /** Calls that failed although their daemon was not killed, and answers that were errors. */
  unexpected: string[];
  /**
   * Calls sent to one daemon while the other was down, and not cut short by a kill of their
   * own daemon afterwards (a blocked call may outlive the other's restart): all must be answered.
   */
  whileOtherDown: { sent: number; answered: number };
}

function makeCaller(slots: readonly Slot[], tally: Tally) {
  return async function attempt<T = any>(slot: Slot, tool: string, args: Record<string, unknown>): Promise<Outcome<T>> {
    const { d, gen } = await slot.live();
    const otherDown = slots.some((s) => s !== slot && s.d === null);
    const sentAt = performance.now();
    let value: any;
    try {
      value = await d.call(tool, args, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    } catch (err) {
      const text = errorMessage(err);
      // An error the daemon answered (JSON-RPC or HTTP) is an answer, killed afterwards or not.
      if (slot.gen === gen || /^(rpc error|HTTP \d)/.test(text)) {
        if (otherDown) tally.whileOtherDown.sent++;
        tally.unexpected.push(`d${slot.index + 1}.${gen} ${tool} ${JSON.stringify(args)} failed${slot.gen === gen ? " while its daemon was alive" : ""}: ${text.slice(0, 300)}`);
        await Bun.sleep(20);
      } else {
        tally.unknown[tool] = (tally.unknown[tool] ?? 0) + 1;
      }
      return { ok: false };
    }
    const ackAt = performance.now();
    if (otherDown) tally.whileOtherDown.sent++;
    if (otherDown && !value?.isError) tally.whileOtherDown.answered++;
    if (value?.isError) {
      tally.unexpected.push(`d${slot.index + 1}.${gen} ${tool} ${JSON.stringify(args)} → ${JSON.stringify(value).slice(0, 300)}`);
      return { ok: false };
    }
    return { ok: true, value, sentAt, ackAt };
  };
}

/** A claim as its consumer saw it: from the answer to the completion's request (or the lease's end). */
interface ClaimSeen {
  id: number;
  agent: string;
  sentAt: number;
  ackAt: number;
  /** When complete_task was sent; Infinity until then. */
  completeSentAt: number;
}

/** The daemons' log lines that say something failed (at most max), to explain a violation. */
function failureLines(daemons: readonly DaemonProcess[], max = 20): string[] {
  return daemons
    .flatMap((d, i) => d.output().split("\n").map((line) => `#${i}:${d.port}| ${line}`))
    .filter((line) => /error|failed|warn|\bat /i.test(line))
    .slice(0, max);
}


describePg("crash loop, two daemons on one PostgreSQL database", () => {
  test(`${KILLS} kill -9 restarts of one daemon or the other under load through both lose nothing acknowledged`, async () => {
    const rng = seeded("crash loop, two daemons");
    const SEED = rng.seed;
    const rnd = prng(SEED);
    const c: Cluster = await startCluster(2);
    let stop = false; // the client loops' end (also when the test fails half-way)
    try {
      const slots = c.daemons.map((d, i) => new Slot(i, d));
      const tally: Tally = { unknown: {}, unexpected: [], whileOtherDown: { sent: 0, answered: 0 } };
      const attempt = makeCaller(slots, tally);

      // Increments: one counter, through both daemons. Each client's values rise strictly in
      // the order it got them (one call at a time, each sent after the last was answered).
      const clientsPerSlot = (n: number) => Array.from({ length: n * slots.length }, (_, i) => ({ c: i, slot: slots[i % slots.length]! }));
      const incrementers = clientsPerSlot(INCREMENTERS);
      const acked: number[][] = incrementers.map(() => []);
      const incAttempts = incrementers.map(() => 0);
      const incrementer = async (c: number, slot: Slot) => {
        while (!stop) {
          incAttempts[c]!++;
          const r = await attempt<{ value: number }>(slot, "increment_counter", { name: COUNTER });
          if (r.ok) acked[c]!.push(r.value.value);
        }
      };

      // Locks: grab one of a few names (waiting up to 1 s), hold it briefly, release it. Each
      // hold runs from the grant's answer to the release's request, or to the TTL's earliest end.
      const holds: Hold[] = [];
      const refusedReleases: { hold: Hold; ackAt: number }[] = [];
      let lockDenied = 0;
      let abandoned = 0;
      const locker = async (c: number, slot: Slot) => {
        const r = prng(SEED + 1000 + c);
        const agent = `locker-${c}`;
        while (!stop) {
          const name = r.pick(LOCK_NAMES);
          const g = await requestLock((tool, args) => attempt<LockAnswer>(slot, tool, args), name, agent, LOCK_TTL_S, () => lockDenied++);
          if (!g) continue;
          const hold: Hold = { name, agent, fence: g.value.fence, from: g.ackAt, to: g.sentAt + LOCK_TTL_S * 1000 - CLOCK_SLACK_MS, asked: g.sentAt };
          holds.push(hold);
          if (abandoned < MAX_ABANDONED && r.chance(0.03)) {
            // Walk away without releasing: the lock frees at its TTL, by the timer of whichever
            // daemon gets there first (the one that granted it may be dead by then).
            abandoned++;
            continue;
          }
          await Bun.sleep(r.int(0, 15));
          hold.to = Math.min(hold.to, performance.now());
          const u = await attempt<{ released: boolean }>(slot, "unlock_resource", { name, lock_token: g.value.lock_token });
          if (u.ok && u.value.released) hold.released = u.ackAt;
          else if (u.ok) refusedReleases.push({ hold, ackAt: u.ackAt });
        }
      };

      // Tasks: one producer per daemon slot with unique payloads (a retry after an unknown
      // outcome gets a new payload, so every task in the queue traces back to one attempt), and
      // consumers on short leases.
      const pushAcks: { id: number; payload: string }[] = [];
      const pushedIds = new Set<number>();
      const unknownPayloads = new Set<string>();
      const completedAcks = new Map<number, number>();
      const claims: ClaimSeen[] = [];
      const staleCompletes: { sentAt: number; ackAt: number; claimSentAt: number }[] = [];
      let unknownCompletes = 0;
      let reusedIds = 0; // an id acknowledged twice would mean an acknowledged push was lost
      const producer = async (p: number, slot: Slot) => {
        const r = prng(SEED + 3000 + p);
        for (let i = 0; !stop; i++) {
          for (let a = 0; ; a++) {
            const payload = `task-${p}-${i}.${a}`;
            const res = await attempt<{ id: number }>(slot, "push_task", { queue: QUEUE, payload, author: `producer-${p}` });
            if (res.ok) {
              if (pushedIds.has(res.value.id)) reusedIds++;
              pushedIds.add(res.value.id);
              pushAcks.push({ id: res.value.id, payload });
              break;
            }
            unknownPayloads.add(payload);
            if (stop) break;
          }
          await Bun.sleep(r.int(...PUSH_PAUSE_MS));
        }
      };
      const consumeOne = async (slot: Slot, agent: string, waitSeconds: number): Promise<boolean> => {
        const got = await attempt<{ claimed: boolean; id: number; lease_token: string }>(slot, "claim_next_task", {
          queue: QUEUE,
          agent_id: agent,
          lease_seconds: LEASE_S,
          wait_seconds: waitSeconds,
        });
        if (!got.ok || !got.value.claimed) return false;
        const claim: ClaimSeen = { id: got.value.id, agent, sentAt: got.sentAt, ackAt: got.ackAt, completeSentAt: Number.POSITIVE_INFINITY };
        claims.push(claim);
        claim.completeSentAt = performance.now();
        const done = await attempt<{ completed: boolean }>(slot, "complete_task", { id: got.value.id, lease_token: got.value.lease_token });
        if (!done.ok) unknownCompletes++;
        else if (done.value.completed) completedAcks.set(got.value.id, (completedAcks.get(got.value.id) ?? 0) + 1);
        else staleCompletes.push({ sentAt: done.sentAt, ackAt: done.ackAt, claimSentAt: got.sentAt });
        return true;
      };
      const consumer = async (c: number, slot: Slot) => {
        const r = prng(SEED + 2000 + c);
        while (!stop) {
          if (await consumeOne(slot, `consumer-${c}`, 1)) await Bun.sleep(r.int(0, 10));
        }
      };

      const t0 = performance.now(); // the loop's start, for the figures and the reports
      const loops = [
        ...incrementers.map(({ c, slot }) => incrementer(c, slot)),
        ...clientsPerSlot(LOCKERS).map(({ c, slot }) => locker(c, slot)),
        ...slots.map((slot, p) => producer(p, slot)),
        ...clientsPerSlot(CONSUMERS).map(({ c, slot }) => consumer(c, slot)),
      ];

      // The killer: one daemon at a time, the victim drawn from the seed; the next kill comes
      // only once the last victim's successor listens.
      const restarts: { slot: number; killedAt: number; upAt: number }[] = [];
      for (let k = 0; k < KILLS; k++) {
        await Bun.sleep(rnd.int(...UPTIME_MS));
        const slot = slots[rnd.int(0, slots.length - 1)]!;
        const victim = slot.down();
        const killedAt = Math.round(performance.now() - t0);
        victim.proc.kill("SIGKILL");
        await victim.proc.exited;
        expect(victim.proc.signalCode).toBe("SIGKILL");
        // On the same database, in the same home (so the same token and, left behind by the
        // kill, a stale socket file the new daemon must take over).
        const next = await startDaemon({ home: victim.home, db: c.db });
        c.daemons.push(next); // so c.stop() kills it
        expect(next.token).toBe(victim.token);
        restarts.push({ slot: slot.index, killedAt, upAt: Math.round(performance.now() - t0) });
        slot.up(next);
      }
      const loopMs = performance.now() - t0;
      stop = true;
      await Promise.all(loops);

      // Drain through one daemon: leases taken by calls whose answers were lost lapse within
      // LEASE_S and requeue; keep claiming until nothing is pending or claimed.
      const d1 = slots[0]!.d!;
      const d2 = slots[1]!.d!;
      const drainStart = performance.now();
      let listed: { id: number; payload: string; state: string }[] = [];
      for (;;) {
        while (await consumeOne(slots[0]!, "drainer", 0));
        listed = await d1.call("list_tasks", { queue: QUEUE });
        if (listed.every((t) => t.state === "done" || t.state === "failed")) break;
        if (performance.now() - drainStart > DRAIN_MS) break;
        await Bun.sleep(100);
      }
      const drainMs = performance.now() - drainStart;

      const violations: string[] = []; // every broken invariant, reported together after the figures

      // ---- Increments.
      const final1 = (await d1.call("increment_counter", { name: COUNTER, by: 0 })).value as number;
      const final2 = (await d2.call("increment_counter", { name: COUNTER, by: 0 })).value as number;
      if (final1 !== final2) violations.push(`the daemons disagree on ${COUNTER}: ${final1} and ${final2}`);
      const all = acked.flat();
      const incAcked = all.length;
      const incUnknown = incAttempts.reduce((a, b) => a + b, 0) - incAcked;
      const seen = new Set<number>();
      let incRepeated = 0;
      for (const v of all) {
        if (seen.has(v)) incRepeated++;
        seen.add(v);
      }
      // An acknowledged value above the final one, or one the journal does not have, was lost.
      const recorded = new Set(await journalValues(d2, COUNTER));
      const incLost = all.filter((v) => v > final1 || !recorded.has(v)).length;
      for (const [c, values] of acked.entries()) {
        const falls = values.filter((v, i) => i > 0 && v <= values[i - 1]!).length;
        if (falls > 0) violations.push(`incrementer ${c}: ${falls} acknowledged values not above the one before`);
      }
      // Every acknowledged call applied once; of the unknown ones, any number from none to all.
      if (final1 < incAcked || final1 - incAcked > incUnknown) violations.push(`${COUNTER}: final ${final1} with ${incAcked} acknowledged and ${incUnknown} unknown`);
      if (incRepeated > 0) violations.push(`${incRepeated} acknowledged increments repeated`);
      if (incLost > 0) violations.push(`${incLost} acknowledged increments lost`);

      // ---- Locks: overlaps, repeated fences, fences going backwards (doubleGrants), and, as in
      // the single-daemon loop, a greater fence always answered after a smaller one.
      const doubles = doubleGrants(holds);
      const overlaps = doubles.filter((x) => x.includes("still held it")).length;
      const fenceRepeats = doubles.filter((x) => x.includes("granted twice")).length;
      const fencesBack = doubles.filter((x) => x.includes("was granted after")).length;
      let orderViolations = 0;
      let acrossDaemons = 0; // consecutive fences answered by different daemon slots
      const slotOf = (h: Hold) => Number(h.agent.slice("locker-".length)) % slots.length;
      for (const name of LOCK_NAMES) {
        const byFence = holds.filter((h) => h.name === name).sort((a, b) => a.fence - b.fence);
        for (let i = 1; i < byFence.length; i++) {
          const a = byFence[i - 1]!;
          const b = byFence[i]!;
          if (b.fence === a.fence + 1 && slotOf(a) !== slotOf(b)) acrossDaemons++;
          if (a.fence !== b.fence && !(b.from > a.from)) {
            orderViolations++;
            if (orderViolations <= 3) violations.push(`${name}: fence ${b.fence} answered at ${Math.round(b.from - t0)} ms, before fence ${a.fence} at ${Math.round(a.from - t0)} ms`);
          }
        }
      }
      if (doubles.length > 0) {
        const show = (x: number) => Math.round(x - t0);
        violations.push(...doubles.slice(0, 5));
        violations.push(`holds (ms since the loop began): ${JSON.stringify(holds.filter((h) => doubles.some((x) => x.includes(`fence ${h.fence} `) || x.includes(`fence ${h.fence})`))).slice(0, 6).map((h) => ({ ...h, from: show(h.from), to: show(h.to), asked: h.asked === undefined ? undefined : show(h.asked), released: h.released === undefined ? undefined : show(h.released) })))}`);
        violations.push(`restarts: ${JSON.stringify(restarts)}`);
      }
      if (overlaps + fenceRepeats + fencesBack + orderViolations > 0) {
        violations.push(`locks: ${overlaps} overlaps, ${fenceRepeats} fences repeated, ${fencesBack} fences backwards, ${orderViolations} out of order`);
      }
      // A release is refused only when the lock's TTL ran out first (its grant came after asked).
      const earlyRefusals = refusedReleases.filter(({ hold, ackAt }) => ackAt - hold.asked! < LOCK_TTL_S * 1000 - CLOCK_SLACK_MS).length;
      if (earlyRefusals > 0) violations.push(`${earlyRefusals} releases refused before the lock's TTL could have run out`);

      // ---- Tasks.
      const listed2 = (await d2.call("list_tasks", { queue: QUEUE })) as typeof listed;
      if (JSON.stringify(listed2.map((t) => [t.id, t.state])) !== JSON.stringify(listed.map((t) => [t.id, t.state]))) violations.push("the daemons list the queue differently");
      // Two claims of one task at once: a claim answered while an earlier one's lease was
      // still held (before its completion was sent and before its lease could have run out).
      let doubleClaims = 0;
      const claimsById = new Map<number, ClaimSeen[]>();
      for (const cl of claims) claimsById.set(cl.id, [...(claimsById.get(cl.id) ?? []), cl]);
      for (const [id, cs] of claimsById) {
        const sorted = [...cs].sort((a, b) => a.ackAt - b.ackAt);
        let last: { to: number; agent: string } | undefined;
        for (const cl of sorted) {
          const to = Math.min(cl.completeSentAt, cl.sentAt + LEASE_S * 1000 - CLOCK_SLACK_MS);
          if (last && cl.ackAt < last.to) {
            doubleClaims++;
            if (doubleClaims <= 3) violations.push(`task ${id}: claimed by ${cl.agent} at ${Math.round(cl.ackAt - t0)} ms while ${last.agent} held it until ${Math.round(last.to - t0)} ms`);
          }
          if (!last || to > last.to) last = { to, agent: cl.agent };
        }
      }
      const reclaimed = [...claimsById.values()].filter((cs) => cs.length > 1).length;
      if (doubleClaims > 0) violations.push(`${doubleClaims} claims answered while another claim of the same task held its lease`);
      // The checks the single-daemon loop makes too.
      const tasks = taskViolations({ listed, pushAcks, unknownPayloads, completedAcks, unknownCompletes, staleCompletes, reusedIds, leaseS: LEASE_S, clockSlackMs: CLOCK_SLACK_MS, drainMs: DRAIN_MS });
      violations.push(...tasks.violations);
      violations.push(...tally.unexpected.slice(0, 10));
      if (tally.unexpected.length > 10) violations.push(`... and ${tally.unexpected.length - 10} more calls failed or answered errors unexpectedly`);

      // ---- A clean stop of both last daemons.
      for (const d of [d1, d2]) {
        const exit = await d.kill("SIGTERM");
        if (exit !== 0) violations.push(`SIGTERM exit code ${exit} (port ${d.port})`);
      }

      const unknownTotal = Object.values(tally.unknown).reduce((a, b) => a + b, 0);
      console.log(
        `crash loop, two daemons (seed ${SEED}): ${KILLS} kills (d1 ${slots[0]!.kills}, d2 ${slots[1]!.kills}) in ${(loopMs / 1000).toFixed(1)} s, drained in ${(drainMs / 1000).toFixed(1)} s; ` +
          `${incAcked} increments acknowledged, ${incUnknown} unknown outcome, lost=${incLost}, repeated=${incRepeated}, final ${final1}; ` +
          `${holds.length} lock grants (${acrossDaemons} right after one through the other daemon, ${abandoned} left to expire, ${lockDenied} waits timed out, ${refusedReleases.length} releases after TTL), overlaps=${overlaps}, fences repeated=${fenceRepeats}, backwards=${fencesBack}, out of order=${orderViolations}; ` +
          `${pushAcks.length} tasks acknowledged (${unknownPayloads.size} pushes unknown), tasks lost=${tasks.tasksLost}, duplicated=${tasks.duplicatedCompletions}, double claims=${doubleClaims}, ` +
          `${listed.length} listed, ${tasks.done} done, ${reclaimed} claimed more than once, ${unknownCompletes} completes unknown; ` +
          `${unknownTotal} unknown outcomes by tool ${JSON.stringify(tally.unknown)}; while the other was down the survivor answered ${tally.whileOtherDown.answered}/${tally.whileOtherDown.sent} calls; ` +
          `unexpected failures ${tally.unexpected.length}`,
      );
      if (violations.length > 0) console.log(`the daemons' logs:\n${failureLines(c.daemons).join("\n")}`);
      expect(violations).toEqual([]);
    } finally {
      stop = true;
      await c.stop();
    }
  });
});
