// Line bodies asked for while a transaction's BEGIN waits for the global order join that
// transaction (src/store/pg/driver.ts, joinWaiting; docs/cluster.md, "A turn carries what
// gathered while it waited"): a daemon whose turn comes after other daemons' takes, in that one
// turn, what was asked of it meanwhile, instead of another turn for it. The order is held from
// outside while the calls arrive; the traced daemon's transactions are counted in its trace.
// Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { ORDER_LOCK } from "../../src/domain/cluster-sync.ts";
import { storeQuery } from "../helpers/daemon.ts";
import { answered, withTracedPair } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

describePg("line bodies asked for while a BEGIN waits for the order", () => {
  test("join its transaction: one exclusive turn for all of them, each granted, fences in the order asked", async () => {
    const { value: w, labels } = await withTracedPair(async (_d1, d2, db) => {
      const holder = new SQL(db, { max: 1 });
      const tx = await holder.reserve();
      try {
        await tx.unsafe(`BEGIN; SELECT pg_advisory_xact_lock(${ORDER_LOCK})`);
        const from = Date.now();
        const claim = (i: number) => d2.call("claim_paths", { agent_id: `join-${i}`, room: "join", paths: [`j${i}/**`], ttl_seconds: 60 });
        // The first claim's BEGIN waits for the order, held here.
        const first = claim(0);
        const waiting = async () => Number((await storeQuery<{ n: string }>(db, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))[0]!.n);
        await until("the first claim's BEGIN waits for the order", async () => (await waiting()) > 0, 5_000, 20);
        const rest = [1, 2, 3, 4, 5, 6].map(claim);
        // Each request reached the daemon's queue before the order is let go (as held-writes.test.ts does).
        await Bun.sleep(500);
        await tx.unsafe("COMMIT");
        const grants = await answered("the claims", Promise.all([first, ...rest]));
        return { from, to: Date.now(), grants };
      } finally {
        await tx.unsafe("ROLLBACK").catch(() => undefined);
        tx.release();
        await holder.close();
      }
    });
    expect(w.grants.map((g: { granted: boolean }) => g.granted)).toEqual([true, true, true, true, true, true, true]);
    // One turn: the first claim's; the six asked while it waited ran in it, after it, in the order asked.
    expect(labels(w.from, w.to).filter((l) => l === "order exclusive")).toEqual(["order exclusive"]);
    const fences = w.grants.map((g: { fence: number }) => g.fence);
    expect(fences).toEqual(Array.from({ length: 7 }, (_, i) => fences[0]! + i));
  });
});
