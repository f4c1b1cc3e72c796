// Flights that overlap (docs/cluster.md): over a slow link, a daemon sends its next batch of row
// bodies before the batch ahead of it is answered, once that batch's flight carried its COMMIT.
// The daemon here ("far") reaches PostgreSQL through bench/link.ts, a proxy that holds every
// chunk LINK_MS each way; the other ("near") on loopback. What must hold: every counter value
// handed out once and recorded once, locks never held twice, no line body's exclusive turn
// begun while a flight is on its way, and with the connection cut under overlapping flights no
// acknowledged increment lost or repeated. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnLink } from "../../bench/link.ts";
import { doubleGrants, type Hold, journalValues, seenEachOther, traceLabels } from "../helpers/cluster.ts";
import { type DaemonProcess, startDaemon, storeQuery } from "../helpers/daemon.ts";
import { describePg, freshDatabase, PG_URL } from "../helpers/pg.ts";

setDefaultTimeout(90_000);

/** Each way: a round trip of at least twice this, above the 1 ms from which flights overlap (OVERLAP_FROM_MS). */
const LINK_MS = 2;
const CLIENTS = 16;
const ROUNDS = 25;
/** Rounds of eight increments side by side, one of them refused. */
const REFUSED_ROUNDS = 48;

/**
 * Two daemons on a fresh database, `far` through the link and traced; `body` runs, then `far`
 * stops (its trace is written at exit) and `labels(from, to)` reads its marks in that window.
 */
async function overLink<T>(body: (near: DaemonProcess, far: DaemonProcess, db: string) => Promise<T>): Promise<{ value: T; labels: (from: number, to: number) => string[] }> {
  const server = new URL(PG_URL!);
  const db = await freshDatabase();
  const link = await spawnLink({ host: server.hostname, port: Number(server.port || 5432) }, LINK_MS);
  const trace = join(mkdtempSync(join(tmpdir(), "airlock-trace-")), "far.trace");
  const near = await startDaemon({ db: db.url });
  const far = await startDaemon({ db: link.via(db.url), env: { AIRLOCK_TRACE: trace } });
  try {
    await seenEachOther(db.url);
    const value = await body(near, far, db.url);
    await far.kill();
    return { value, labels: (from, to) => traceLabels(trace, from, to) };
  } finally {
    await Promise.all([near.kill(9), far.kill(9)]);
    link.close();
    await db.drop();
  }
}

/** The flights still on their way at each exclusive turn the trace shows, and how many flights overlapped. */
function flightsAtExclusiveTurns(labels: readonly string[]): { overlapped: number; exclusive: number; onTheirWay: number[] } {
  let flying = 0;
  let overlapped = 0;
  let exclusive = 0;
  const onTheirWay: number[] = [];
  for (const l of labels) {
    if (l === "flight overlaps") {
      flying++;
      overlapped++;
    } else if (l === "flight landed") flying--;
    else if (l === "order exclusive") {
      exclusive++;
      if (flying > 0) onTheirWay.push(flying);
    }
  }
  return { overlapped, exclusive, onTheirWay };
}

describePg("flights that overlap, over a slow link", () => {
  test("counters and contended locks side by side: every value once and recorded once, one holder at a time, and no exclusive turn while a flight is on its way", async () => {
    const { value, labels } = await overLink(async (near, far) => {
      // The first flights are measured before any may overlap (FLIGHTS_MEASURED): a warm-up.
      for (let i = 0; i < 40; i++) await far.call("increment_counter", { name: "warm-up" });
      const from = Date.now();
      const holds: Hold[] = [];
      const problems: string[] = [];
      const counting = Array.from({ length: CLIENTS }, async (_, c) => {
        const hot: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const d = c % 4 === 3 ? near : far;
          const a = await d.call("increment_counter", { name: "ov-hot" });
          const b = await far.call("increment_counter", { name: `ov-own-${c}` });
          if (b.value !== r + 1) problems.push(`ov-own-${c}: round ${r} answered ${JSON.stringify(b)}`);
          hot.push(a.value as number);
        }
        return hot;
      });
      // Four agents contend for one lock through the far daemon: its waiters' lines are line bodies.
      const locking = Array.from({ length: 4 }, async (_, i) => {
        const agent = `ov-agent-${i}`;
        for (let r = 0; r < 6; r++) {
          const asked = performance.now();
          const a = await far.call("lock_resource", { name: "ov-lock", agent_id: agent, ttl_seconds: 30, wait_seconds: 20 });
          if (!a.locked) {
            problems.push(`${agent}: lock_resource answered ${JSON.stringify(a)}`);
            continue;
          }
          const hold: Hold = { name: "ov-lock", agent, fence: a.fence, from: performance.now(), to: Number.POSITIVE_INFINITY, asked };
          holds.push(hold);
          await far.call("increment_counter", { name: `ov-held-${i}` });
          hold.to = performance.now();
          const u = await far.call("unlock_resource", { name: "ov-lock", lock_token: a.lock_token });
          if (u.released !== true) problems.push(`${agent}: unlock answered ${JSON.stringify(u)}`);
          else hold.released = performance.now();
        }
      });
      const hot = (await Promise.all(counting)).flat();
      await Promise.all(locking);
      return { from, to: Date.now(), hot, holds, problems, journal: await journalValues(near, "ov-hot") };
    });
    expect(value.problems).toEqual([]);
    const n = CLIENTS * ROUNDS;
    expect([...value.hot].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(value.journal).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(doubleGrants(value.holds)).toEqual([]);
    expect(value.holds.length).toBe(24);
    // Flights did overlap, exclusive turns were taken, and none began with a flight on its way.
    const seen = flightsAtExclusiveTurns(labels(value.from, value.to));
    expect(seen.overlapped).toBeGreaterThan(0);
    expect(seen.exclusive).toBeGreaterThan(0);
    expect(seen.onTheirWay).toEqual([]);
  });

  test("a counter the schema refuses fails alone among overlapping flights: the others of its batch commit once, and it is unchanged", async () => {
    const { value, labels } = await overLink(async (near, far) => {
      for (let i = 0; i < 40; i++) await far.call("increment_counter", { name: "warm-up" });
      expect((await far.call("increment_counter", { name: "ov-edge", by: Number.MAX_SAFE_INTEGER })).value).toBe(Number.MAX_SAFE_INTEGER);
      const from = Date.now();
      let stop = false;
      // Traffic beside the rounds, so the flights keep overlapping: counters, and events signaled
      // and cleared (a clear with nobody waiting is a row body of two round trips: a flight that
      // fails must not end its transaction in the middle).
      const beside = Array.from({ length: 8 }, async (_, c) => {
        let n = 0;
        while (!stop) {
          if (c % 2 === 0) expect((await far.call("increment_counter", { name: `ov-beside-${c}` })).value).toBe(++n);
          else {
            expect((await far.call("signal_event", { name: `ov-ev-${c}` })).generation).toBe(1);
            await far.call("clear_event", { name: `ov-ev-${c}` });
            n++;
          }
        }
        return n;
      });
      const rounds: { refused: string; others: number[] }[] = [];
      for (let r = 0; r < REFUSED_ROUNDS; r++) {
        const answers = await Promise.all(Array.from({ length: 8 }, (_, c) => far.call("increment_counter", { name: c === 3 ? "ov-edge" : `ov-ok-${c}` })));
        rounds.push({ refused: JSON.stringify(answers[3]), others: answers.filter((_, c) => c !== 3).map((a) => a.value as number) });
      }
      stop = true;
      const besides = await Promise.all(beside);
      const journals = await Promise.all([0, 1, 2, 4, 5, 6, 7].map((c) => journalValues(near, `ov-ok-${c}`)));
      return { from, to: Date.now(), rounds, besides, journals, edge: await journalValues(near, "ov-edge") };
    });
    for (const [r, round] of value.rounds.entries()) {
      expect(round.refused).toContain("exact integer range");
      expect(round.others).toEqual(Array.from({ length: 7 }, () => r + 1));
    }
    for (const j of value.journals) expect(j).toEqual(Array.from({ length: REFUSED_ROUNDS }, (_, r) => r + 1));
    expect(value.edge).toEqual([Number.MAX_SAFE_INTEGER]);
    expect(Math.min(...value.besides)).toBeGreaterThan(0);
    const seen = flightsAtExclusiveTurns(labels(value.from, value.to));
    expect(seen.overlapped).toBeGreaterThan(0);
    expect(seen.onTheirWay).toEqual([]);
  });

  test("the connection cut twice under overlapping flights: no acknowledged increment lost or repeated", async () => {
    const { value, labels } = await overLink(async (near, far, db) => {
      for (let i = 0; i < 40; i++) await far.call("increment_counter", { name: "warm-up" });
      const from = Date.now();
      const acked = new Array<number>(CLIENTS).fill(0);
      const unknown = new Array<number>(CLIENTS).fill(0);
      let stop = false;
      const clients = Array.from({ length: CLIENTS }, async (_, c) => {
        while (!stop) {
          const r = await far.call("increment_counter", { name: `cut-${c}` }).catch((err: unknown) => ({ isError: true, thrown: String(err) }));
          if (r.isError) unknown[c]!++;
          else acked[c]!++;
        }
      });
      // Cut every backend of the database (both daemons') twice while the clients run.
      for (let k = 0; k < 2; k++) {
        await Bun.sleep(1_500);
        await storeQuery(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      }
      await Bun.sleep(1_500);
      stop = true;
      await Promise.all(clients);
      const stored = new Map((await storeQuery<{ name: string; value: string }>(db, "SELECT name, value FROM counters WHERE name LIKE 'cut-%'")).map((r) => [r.name, Number(r.value)]));
      const values = await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => ({ now: stored.get(`cut-${c}`) ?? 0, journal: await journalValues(near, `cut-${c}`) })));
      return { from, to: Date.now(), acked, unknown, values };
    });
    for (let c = 0; c < CLIENTS; c++) {
      const { now, journal } = value.values[c]!;
      // Every acknowledged increment is there once; an unanswered one may or may not have committed.
      expect([now >= value.acked[c]!, now <= value.acked[c]! + value.unknown[c]!]).toEqual([true, true]);
      // The journal holds each value once, in order.
      expect(journal).toEqual(Array.from({ length: now }, (_, i) => i + 1));
    }
    expect(value.acked.reduce((a, b) => a + b, 0)).toBeGreaterThan(CLIENTS);
    const seen = flightsAtExclusiveTurns(labels(value.from, value.to));
    expect(seen.overlapped).toBeGreaterThan(0);
    expect(seen.onTheirWay).toEqual([]);
  });
});
