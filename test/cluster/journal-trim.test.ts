// The journal's count limit on a shared store (docs/cluster.md, "Scaling out"): counter calls
// are row bodies, which check the count once they committed (a read in the shared order, not in
// the body: docs/cluster.md, "A row batch in one flight") and leave the trim itself to a
// transaction of the global order. So with AIRLOCK_JOURNAL_MAX set low, many concurrent calls on
// two daemons all succeed with distinct values, the table is cut back, and what is kept is
// gap-free up to the newest entry. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { storeQuery } from "../helpers/daemon.ts";
import { useCluster } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

const MAX = 40;
const CLIENTS = 16;
const CALLS = 40;

describePg("the journal's count limit with two daemons", () => {
  const c = useCluster(2, { env: { AIRLOCK_JOURNAL_MAX: String(MAX) } });

  test(`${CLIENTS * CALLS} concurrent increments on two daemons: every value once, the journal cut back and gap-free up to the newest`, async () => {
    const values = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        const d = c.daemons[i % 2]!;
        const got: number[] = [];
        for (let n = 0; n < CALLS; n++) {
          const r = await d.call("increment_counter", { name: `trim-${i}` });
          expect(r.isError).toBeUndefined();
          got.push(r.value);
        }
        return got;
      }),
    );
    for (const got of values) expect(got).toEqual(Array.from({ length: CALLS }, (_, n) => n + 1));
    // Every call inserted one entry, so the newest revision counts them; each daemon checked
    // after its 256th insert committed and the trim ran then (a moment later, on a busy machine
    // maybe after the last call), so at most the last few hundred remain.
    const keptNow = async () => (await storeQuery<{ revision: string }>(c.db, "SELECT revision FROM journal ORDER BY revision")).map((r) => Number(r.revision));
    await until("the trim", async () => (await keptNow()).length < CLIENTS * CALLS - 256, 10_000);
    const kept = await keptNow();
    const newest = kept[kept.length - 1]!;
    expect(newest).toBeGreaterThanOrEqual(CLIENTS * CALLS);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, n) => kept[0]! + n));
    // The change feed reads the same tail, in order, from either daemon.
    const feed = await c.daemons[1]!.call("watch_changes", { since_revision: newest - 5 });
    expect(feed.changes.map((e: { revision: number }) => e.revision)).toEqual([newest - 4, newest - 3, newest - 2, newest - 1, newest]);
  });
});
