// Who hears a NOTIFY (docs/cluster.md, "Who hears a NOTIFY"): a change another daemon records
// (a counter's row body, a claim and its release in the global order) wakes only the daemons with
// a change-feed watcher; a daemon with nothing blocked and no watcher is not woken by them at all
// (its trace marks every NOTIFY it hears: "heard <what>"). Once a watcher waits there, the same
// changes reach it: it is woken by the NOTIFY it now hears, not by the end of its wait. Skipped
// without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { seenEachOther, tracedDaemons, withTracedPair } from "../helpers/cluster.ts";
import { startDaemon, storeQuery } from "../helpers/daemon.ts";
import { describePg, freshDatabase } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

/** The watcher's wait: far longer than the test lets it take (it must be woken, not time out). */
const WAIT_S = 30;

describePg("who hears a NOTIFY", () => {
  test("a daemon with no watcher hears none of another's recorded changes; with one waiting, it hears them and the watcher wakes", async () => {
    const { value: w, labels } = await withTracedPair(async (d1, d2) => {
      const idle = { from: Date.now(), to: 0 };
      for (let i = 0; i < 10; i++) {
        expect((await d1.call("increment_counter", { name: "heard-c" })).value).toBe(i + 1);
        const g = await d1.call("claim_paths", { agent_id: "heard-a", room: "heard", paths: [`p${i}/**`], ttl_seconds: 60 });
        expect(g.granted).toBe(true);
        expect(await d1.call("release_paths", { claim_token: g.claim_token })).toEqual({ released: true });
        await Bun.sleep(60); // past the spacing of row bodies' NOTIFYs: each round would send one
      }
      await Bun.sleep(300); // what was sent has arrived
      idle.to = Date.now();
      // A watcher on d2, waiting for counters after the newest change: it looks, then waits.
      const head = (await d2.call("watch_changes", {})).revision as number;
      const started = Date.now();
      const watching = d2.call("watch_changes", { since_revision: head, kinds: ["counter."], wait_seconds: WAIT_S });
      let settled = false;
      void watching.then(() => (settled = true));
      await Bun.sleep(500); // it is waiting (a budget for the look, not a measurement)
      expect(settled).toBe(false);
      const made = await d1.call("increment_counter", { name: "heard-c" });
      const woke = await watching;
      return { idle, made, woke, waited: Date.now() - started };
    });
    expect(w.woke.changes.map((e: { resource: string; value?: number }) => [e.resource, e.value])).toEqual([["heard-c", w.made.value]]);
    expect(w.waited).toBeLessThan((WAIT_S * 1000) / 2); // woken, not answered at the end of its wait
    expect(labels(w.idle.from, w.idle.to).filter((l) => l.startsWith("heard "))).toEqual([]);
    expect(labels(w.idle.to, Date.now()).filter((l) => l === "heard journal").length).toBeGreaterThanOrEqual(1);
  });
});

// A grant, or a place in line written, answers a call blocked on the daemon it is for alone:
// its NOTIFY names that daemon, and every other daemon with a call blocked catches it up at its
// next transaction instead of at once, in the exclusive order (with a hundred daemons each
// holding a blocked worker, every hand-off of a lock used to cost 99 exclusive turns). Since
// the NOTIFY goes to that daemon's own channel, the others do not even hear it.
describePg("a grant's NOTIFY names its daemon", () => {
  test("a daemon with a call blocked hears nothing of hand-offs between two others and takes no exclusive turn for them; they still hand off in order", async () => {
    const HANDOFFS = 12;
    const db = await freshDatabase();
    const { first: d1, traced, labels } = await tracedDaemons(db.url, 1);
    const d3 = traced[0]!;
    const d2 = await startDaemon({ db: db.url });
    try {
      await seenEachOther(db.url);
      // A worker blocked on d3 all along, on a queue nobody pushes to.
      // (Its connection ends when d3 stops: then it is answered by nothing.)
      const worker = d3.call("claim_next_task", { queue: "hand-idle", agent_id: "idle-worker", wait_seconds: 30 }).catch(() => null);
      let workerDone = false;
      void worker.then(() => (workerDone = true));
      const held = await d1.call("lock_resource", { name: "hand", agent_id: "hand-0", ttl_seconds: 60 });
      expect(held.locked).toBe(true);
      await until("the worker in the stored lines", async () => (await storeQuery(db.url, "SELECT 1 FROM waiters WHERE queue = 'task'")).length === 1, 5_000);
      const from = Date.now();
      let token = held.lock_token as string;
      let holder = d1;
      const fences: number[] = [held.fence as number];
      for (let i = 1; i <= HANDOFFS; i++) {
        const next = holder === d1 ? d2 : d1;
        // The next holder waits in line on the other daemon; the holder's release grants it there.
        const waiting = next.call("lock_resource", { name: "hand", agent_id: `hand-${i}`, ttl_seconds: 60, wait_seconds: 20 });
        await until("the next holder in line", async () => ((await holder.call("list_locks")) as { name: string; waiters?: unknown[] }[]).some((l) => l.name === "hand" && (l.waiters?.length ?? 0) > 0), 5_000);
        expect(await holder.call("unlock_resource", { name: "hand", lock_token: token })).toMatchObject({ released: true });
        const got = await waiting;
        expect(got.locked).toBe(true);
        fences.push(got.fence as number);
        token = got.lock_token as string;
        holder = next;
      }
      const to = Date.now();
      expect(workerDone).toBe(false);
      await d3.kill();
      // The fences rose with every hand-off; d3 heard none of the grants' NOTIFYs (each went to
      // its grantee's own channel) and took no exclusive turn for them.
      expect(fences.every((f, i) => i === 0 || f > fences[i - 1]!)).toBe(true);
      const marks = labels(d3, from, to);
      expect(marks.filter((l) => l.startsWith("heard "))).toEqual([]);
      expect(marks.filter((l) => l === "order exclusive")).toEqual([]);
    } finally {
      await Promise.all([d1.kill(9), d2.kill(9), d3.kill(9)]);
      await db.drop();
    }
  });
});
