// Who hears a NOTIFY (docs/cluster.md, "Who hears a NOTIFY"): a change another daemon records
// (a counter's row body, a claim and its release in the global order) wakes only the daemons with
// a change-feed watcher; a daemon with nothing blocked and no watcher is not woken by them at all
// (its trace marks every NOTIFY it hears: "heard <what>"). Once a watcher waits there, the same
// changes reach it: it is woken by the NOTIFY it now hears, not by the end of its wait. Skipped
// without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { withTracedPair } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";

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
