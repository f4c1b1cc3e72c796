// PostgreSQL's migration 005: slot_requests goes; the waiter lines (`waiters`) are the one
// stored form of a pool's queue (src/domain/lines.ts). A request slot_requests alone held joins
// the lines as a place of no daemon (it stays in line, detached, with its grace); the rows
// waiters already held stay as they were, with grace_ends added.
import { expect, test } from "bun:test";
import { ManualClock } from "../../src/domain/clock.ts";
import { createKernel } from "../../src/domain/kernel.ts";
import { openPgStore } from "../../src/store/pg/index.ts";
import { PG_MIGRATIONS } from "../../src/store/pg/migrate.ts";
import { describePg, freshDatabase, withClient } from "../helpers/pg.ts";

describePg("PostgreSQL migration 005", () => {
  test("moves slot_requests into the lines, keeps the waiters rows, and the pool serves them in order", async () => {
    const db = await freshDatabase();
    try {
      const now = Date.now();
      await withClient(db.url, async (sql) => {
        await sql.unsafe("CREATE TABLE airlock_schema (version INT NOT NULL)");
        await sql.unsafe("INSERT INTO airlock_schema (version) VALUES (4)");
        for (const m of PG_MIGRATIONS.slice(0, 4)) await sql.unsafe(m);
        await sql.unsafe("INSERT INTO pools (name, capacity, offer_seconds, version, updated_at, updated_by, reason) VALUES ('p', 1, 30, 1, 0, 'e', 'r')");
        await sql.unsafe(`INSERT INTO slots (token, pool, agent_id, weight, reason, fence, acquired_at, expires_at) VALUES ('slotA', 'p', 'A', 1, 'build', 1, ${now}, ${now + 3600_000})`);
        // B: in both tables (as 004's daemons wrote it); C: only in slot_requests, bound on m1.
        const reqB = { agentId: "B", weight: 1, reason: null, ttlMs: 60000, binding: null, state: "queued", offerExpiresAt: null };
        await sql.unsafe(
          "INSERT INTO slot_requests (token, pool, agent_id, weight, reason, ttl_ms, pid, pgid, pid_start, state, offer_expires_at, since, seq) VALUES " +
            `('tokB', 'p', 'B', 1, NULL, 60000, NULL, NULL, NULL, 'queued', NULL, ${now}, 5), ('tokC', 'p', 'C', 1, 'docs', 60000, 42, 42, '99@m1', 'queued', NULL, ${now}, 6)`,
        );
        await sql.unsafe(`INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon) VALUES ('tokB', 'slot', '["p"]', 'B', $1, 5, ${now}, false, 'gone')`, [
          JSON.stringify(reqB),
        ]);
      });
      const store = await openPgStore(db.url);
      await withClient(db.url, async (sql) => {
        expect(await sql.unsafe("SELECT tablename FROM pg_tables WHERE tablename = 'slot_requests'")).toEqual([]);
        const rows = (await sql.unsafe("SELECT token, keys, agent_id, req, ord, attached, daemon, grace_ends FROM waiters ORDER BY ord")) as any[];
        expect(rows.map((r) => [r.token, r.keys, r.agent_id, Number(r.ord), r.attached, r.daemon, r.grace_ends])).toEqual([
          ["tokB", '["p"]', "B", 5, false, "gone", null],
          ["tokC", '["p"]', "C", 6, false, "", null],
        ]);
        expect(JSON.parse(rows[1].req)).toEqual({
          agentId: "C",
          weight: 1,
          reason: "docs",
          ttlMs: 60000,
          binding: { pid: 42, pgid: 42, startTime: "99", host: "m1" },
          state: "queued",
          offerExpiresAt: null,
        });
      });
      const kernel = await createKernel({ store, clock: new ManualClock(now) });
      try {
        const p = (await kernel.pools.list()).find((x) => x.pool === "p")!;
        expect(p.waiters.map((w) => [w.agentId, w.blocked])).toEqual([
          ["B", false],
          ["C", false],
        ]);
        expect(await kernel.pools.acquire({ agentId: "C", pool: "p", waitMs: 0, wakeToken: "tokC" })).toMatchObject({ granted: false, position: 2 });
        expect(await kernel.pools.release("slotA")).toBe(true);
        expect(await kernel.pools.acquire({ agentId: "B", pool: "p", waitMs: 0, wakeToken: "tokB" })).toMatchObject({ granted: true });
      } finally {
        kernel.close();
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });
});
