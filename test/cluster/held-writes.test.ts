// A batch of row bodies writes its journal entries with its COMMIT (runLater: the entries of
// all its bodies as one INSERT, in the COMMIT's round trip; docs/cluster.md, "Scaling out").
// What this changes for a caller is nothing, and that is what is held here: every body's entry
// is there, in the order of the rows it changed, and when the held write fails the body it
// belongs to fails alone, while the others of its batch commit (they run again, each alone).
// The batch is made by holding the global order exclusively from outside while the calls
// arrive: the daemon's batch waits for it at its BEGIN and the calls gather behind it. Skipped
// without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { ORDER_LOCK } from "../../src/domain/cluster-sync.ts";
import { storeQuery } from "../helpers/daemon.ts";
import { answered, journalValues, useCluster } from "../helpers/cluster.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

describePg("writes held for a row batch's COMMIT", () => {
  const c = useCluster(2);

  /** Runs `calls` on the first daemon while the global order is held, so they form one batch; their answers. */
  async function inOneBatch<T>(calls: () => Promise<T>[]): Promise<T[]> {
    const [d1] = c.daemons;
    const holder = new SQL(c.db, { max: 1 });
    const tx = await holder.reserve();
    try {
      await tx.unsafe(`BEGIN; SELECT pg_advisory_xact_lock(${ORDER_LOCK})`);
      // A first call, whose batch waits at its BEGIN: everything asked after it gathers in the next.
      const opener = d1!.call("increment_counter", { name: "held-opener" });
      const waiting = async () => Number((await storeQuery<{ n: string }>(c.db, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))[0]!.n);
      await until("the first batch waits for the order", async () => (await waiting()) > 0, 5_000, 20);
      const answers = calls();
      // Each request reached the daemon's queue before the order is let go (the bodies only yield once it is).
      await Bun.sleep(300);
      await tx.unsafe("COMMIT");
      await answered("the opener", opener);
      return await answered("the batch", Promise.all(answers));
    } finally {
      await tx.unsafe("ROLLBACK").catch(() => undefined);
      tx.release();
      await holder.close();
    }
  }

  test("a batch's entries are all written, each after its own row, and read in order on the other daemon", async () => {
    const [, d2] = c.daemons;
    const names = Array.from({ length: 12 }, (_, i) => `held-${i % 4}`);
    const got = await inOneBatch(() => names.map((name) => c.daemons[0]!.call("increment_counter", { name })));
    expect(got.every((r) => r.isError !== true)).toBe(true);
    for (let k = 0; k < 4; k++) {
      const values = got.filter((_, i) => names[i] === `held-${k}`).map((r) => r.value);
      expect([...values].sort((a, b) => a - b)).toEqual([1, 2, 3]);
      // The journal shows each counter's values in the order they were handed out.
      expect(await journalValues(d2!, `held-${k}`)).toEqual([1, 2, 3]);
    }
    const revisions = (await storeQuery<{ revision: string }>(c.db, "SELECT revision FROM journal ORDER BY revision")).map((r) => Number(r.revision));
    expect(revisions).toEqual(Array.from({ length: revisions.length }, (_, i) => revisions[0]! + i));
  });

  test("when the held write of one body fails, that body alone fails and the others of its batch commit", async () => {
    await storeQuery(c.db, "ALTER TABLE journal ADD CONSTRAINT held_poison CHECK (resource <> 'held-poison')");
    try {
      const names = ["held-a", "held-b", "held-poison", "held-c", "held-d"];
      const got = await inOneBatch(() => names.map((name) => c.daemons[0]!.call("increment_counter", { name })));
      expect(got.map((r) => r.isError === true)).toEqual([false, false, true, false, false]);
      expect(JSON.stringify(got[2])).toContain("held_poison");
      const rows = await storeQuery<{ name: string; value: string }>(c.db, "SELECT name, value FROM counters WHERE name IN ('held-a', 'held-b', 'held-poison', 'held-c', 'held-d') ORDER BY name");
      expect(rows.map((r) => [r.name, Number(r.value)])).toEqual([
        ["held-a", 1],
        ["held-b", 1],
        ["held-c", 1],
        ["held-d", 1],
      ]);
      for (const name of ["held-a", "held-b", "held-c", "held-d"]) expect(await journalValues(c.daemons[1]!, name)).toEqual([1]);
    } finally {
      await storeQuery(c.db, "ALTER TABLE journal DROP CONSTRAINT held_poison");
    }
  });

  // Line bodies share their transaction's fate: one whose held write fails takes the batch's
  // other bodies down with it. A string PostgreSQL's text cannot hold (the NUL character) is the
  // one a caller could send: refused before the call runs, naming the field, on this store only.
  test("a claim whose reason holds a NUL is refused before it runs, and the claims of its batch are granted", async () => {
    const asks = [0, 1, 2, 3].map((i) => ({ agent_id: `held-nul-${i}`, room: "held-nul", paths: [`src/n${i}/**`], reason: i === 2 ? "bad\u0000reason" : "fine", ttl_seconds: 60 }));
    const got = await inOneBatch(() => asks.map((a) => c.daemons[0]!.call("claim_paths", a)));
    expect(got.map((r) => r.granted === true)).toEqual([true, true, false, true]);
    expect(got[2]).toEqual({ error: "reason: must not contain the NUL character (U+0000): a PostgreSQL store cannot hold it" });
    const held = await storeQuery<{ agent_id: string }>(c.db, "SELECT agent_id FROM path_claims WHERE room = 'held-nul' ORDER BY agent_id");
    expect(held.map((r) => r.agent_id)).toEqual(["held-nul-0", "held-nul-1", "held-nul-3"]);
    // Anywhere in the arguments: an element of a list is named by its place.
    expect(await c.daemons[1]!.call("claim_paths", { agent_id: "held-nul-x", room: "held-nul", paths: ["ok/**", "x\u0000/**"] })).toEqual({
      error: "paths[1]: must not contain the NUL character (U+0000): a PostgreSQL store cannot hold it",
    });
  });

  // A daemon keeps its rooms' last fences between grants (fences.ts, RoomFences), written as held
  // writes: another daemon's grant in the room must make it forget them, or it would repeat one.
  test("a room's fences stay strictly increasing when its claims alternate between the daemons", async () => {
    const on = [0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1];
    const fences: number[] = [];
    for (const [i, d] of on.entries()) {
      const g = await c.daemons[d]!.call("claim_paths", { agent_id: `held-f${i}`, room: "held-fences", paths: [`f${i}/**`], ttl_seconds: 60 });
      expect(g.granted).toBe(true);
      fences.push(g.fence);
      if (i % 3 === 2) expect(await c.daemons[1 - d]!.call("release_paths", { claim_token: g.claim_token })).toEqual({ released: true });
    }
    expect(new Set(fences).size).toBe(fences.length);
    expect(fences).toEqual([...fences].sort((x, y) => x - y));
    const row = await storeQuery<{ fence: string }>(c.db, "SELECT fence FROM fences WHERE resource = 'room:held-fences'");
    expect(Number(row[0]!.fence)).toBe(fences.at(-1)!);
  });
});
