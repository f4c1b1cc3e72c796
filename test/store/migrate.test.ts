// Migrations upgrade a database written by an older airlock without losing what it holds.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { ManualClock } from "../../src/domain/clock.ts";
import { MIGRATIONS, migrate } from "../../src/store/migrate.ts";
import { tempDbPath } from "../domain/support.ts";
import { makeKernel } from "../helpers/kernel.ts";

test("schema v4 keeps held locks and carries every released lock's fence into its row", async () => {
  const db = tempDbPath();
  try {
    // A v3 database: one lock held, one released after three grants, one pool fence.
    const old = new Database(db.path, { create: true, strict: true });
    for (let v = 0; v < 3; v++) old.exec(MIGRATIONS[v]!);
    old.exec("PRAGMA user_version = 3");
    const far = Date.now() + 3600_000;
    old.query("INSERT INTO locks (name, agent_id, token, fence, acquired_at, expires_at) VALUES ('held', 'A', 'tok', 5, 0, ?)").run(far);
    old.exec("INSERT INTO fences (resource, fence) VALUES ('lock:held', 5), ('lock:released', 3), ('pool:heavy', 7)");
    old.close();

    const upgraded = new Database(db.path, { strict: true });
    expect(migrate(upgraded)).toBe(MIGRATIONS.length);
    expect(upgraded.query("SELECT name, agent_id, fence FROM locks ORDER BY name").all()).toEqual([
      { name: "held", agent_id: "A", fence: 5 },
      { name: "released", agent_id: null, fence: 3 },
    ]);
    expect(upgraded.query("SELECT resource FROM fences").all()).toEqual([{ resource: "pool:heavy" }]);
    upgraded.close();

    const k = await makeKernel({ path: db.path, clock: new ManualClock(Date.now()) });
    const next = await k.kernel.locks.acquire({ name: "released", agentId: "B", ttlMs: 60_000, waitMs: 0 });
    expect(next).toMatchObject({ locked: true, fence: 4 });
    expect((await k.kernel.locks.list()).map((l) => [l.name, l.agent_id, l.fence])).toEqual([
      ["held", "A", 5],
      ["released", "B", 4],
    ]);
    expect(await k.kernel.locks.release("held", "tok", undefined)).toBe(true);
    expect(await k.kernel.locks.acquire({ name: "held", agentId: "C", ttlMs: 60_000, waitMs: 0 })).toMatchObject({ fence: 6 });
    k.kernel.close();
    k.store.close();
  } finally {
    db.cleanup();
  }
});
