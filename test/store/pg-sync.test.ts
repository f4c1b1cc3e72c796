// The cluster version protocol (src/domain/cluster-sync.ts, run by src/store/pg/) between two stores on one database, each
// attached as a daemon would attach it: what one commits reaches the other's next transaction
// as a catch-up naming the tables it wrote, and nothing else does. The hooks are the domain's
// side of the seam (src/domain/cluster.ts implements them); here they only record the calls.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { VersionSync } from "../../src/domain/cluster-sync.ts";
import { openPgStore, type PgStore } from "../../src/store/pg/index.ts";
import type { ClusterHooks } from "../../src/store/store.ts";
import { run } from "../../src/store/tx.ts";
import { describePg, freshDatabase } from "../helpers/pg.ts";

/** Hooks that record each catch-up's tables (sorted; null: reread everything). */
function recorder() {
  const calls: (string[] | null)[] = [];
  const state = { flushWrites: false };
  const hooks: ClusterHooks = {
    *catchUp(changed) {
      calls.push(changed === null ? null : [...changed].sort());
    },
    *flush() {
      const wrote = state.flushWrites;
      state.flushWrites = false;
      return wrote;
    },
    forget() {},
    waiting: () => false, // so a NOTIFY alone never triggers a catch-up: only the next call does
  };
  return { calls, hooks, state };
}

describePg("the cluster version protocol between two stores", () => {
  let db: { url: string; name: string; drop(): Promise<void> };
  let a: PgStore;
  let b: PgStore;
  const ra = recorder();
  const rb = recorder();
  beforeAll(async () => {
    db = await freshDatabase();
    a = await openPgStore(db.url);
    b = await openPgStore(db.url);
    await a.shared.attach(new VersionSync(ra.hooks, a.shared.daemonId));
    await b.shared.attach(new VersionSync(rb.hooks, b.shared.daemonId));
    await b.tx(function* () {}); // b has seen where the shared state stands
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  test("a store that just attached catches up in full, once", async () => {
    expect(rb.calls).toEqual([null]);
    await b.tx(function* () {});
    expect(rb.calls).toEqual([null]);
  });

  test("the other's commit reaches this store's next transaction, naming the tables it wrote", async () => {
    rb.calls.length = 0;
    await a.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "sync", 1);
      yield* run("INSERT INTO notes (key, value, updated_at) VALUES (?, ?, ?)", "sync", "v", 0);
    });
    await b.read((function* () {})()); // a read takes its turn in the global order, and catches up too
    expect(rb.calls).toEqual([["counters", "notes"]]);
    await b.tx(function* () {});
    expect(rb.calls).toEqual([["counters", "notes"]]);
  });

  test("a transaction that changed no row moves no version: the other does not catch up", async () => {
    rb.calls.length = 0;
    await a.tx(function* () {
      yield* run("DELETE FROM counters WHERE name = ?", "none");
      yield* run("UPDATE notes SET value = ? WHERE key = ?", "w", "none");
    });
    await b.tx(function* () {});
    expect(rb.calls).toEqual([]);
  });

  test("a flush that wrote with no table named by a statement makes the other reread everything", async () => {
    rb.calls.length = 0;
    ra.state.flushWrites = true;
    await a.tx(function* () {});
    await b.tx(function* () {});
    expect(rb.calls).toEqual([null]);
  });
});
