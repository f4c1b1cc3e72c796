// Deltas by horizon (src/domain/mirror.ts, migration 016; docs/cluster.md, "Working-tree reports
// beside the order"): a mirror whose table row bodies write reads, at each look, the rows and
// deleted keys whose writer's transaction id is at or above the horizon its last look reached
// (that look's snapshot's xmin). A row version cannot bound what is still to commit there: a
// writer still open when a later one commits is missed by a delta from the newest version seen.
// Here real transactions on a real server stand in for the daemons' row bodies, one held open
// across a look. (That a daemon reads whole past the trim's floor: test/domain/deltas.test.ts.)
// Skipped without a server (AIRLOCK_TEST_PG).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { standing, VersionSync } from "../../src/domain/cluster-sync.ts";
import { horizonDelta, horizonReads } from "../../src/domain/mirror.ts";
import { openPgStore, type PgStore } from "../../src/store/pg/index.ts";
import type { ClusterHooks } from "../../src/store/store.ts";
import { gather } from "../../src/store/tx.ts";
import { describePg, freshDatabase } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

describePg("deltas by horizon", () => {
  let db: { url: string; drop(): Promise<void> };
  let store: PgStore;
  let sql: SQL;
  beforeAll(async () => {
    db = await freshDatabase();
    store = await openPgStore(db.url);
    sql = new SQL(db.url, { max: 3 });
  });
  afterAll(async () => {
    await sql?.close();
    await store?.close();
    await db?.drop();
  });

  const delta = (since: number | null) =>
    store.read(
      (function* () {
        return horizonDelta<{ agent_id: string }>(since, yield* gather(...horizonReads("worktrees", since)));
      })(),
    );
  const names = (rows: { agent_id: string }[]) => rows.map((r) => r.agent_id).sort();
  const REPORT = "INSERT INTO worktrees (agent_id, room, branch, head, dirty, touched, reported_at, expires_at) VALUES ($1, 'r', NULL, NULL, '[]', '{}', 0, 9999999999999)";
  /** A transaction of its own, left open: its id, and how to end it. */
  async function open(statement: string, ...args: unknown[]) {
    const tx = await sql.reserve();
    await tx.unsafe("BEGIN");
    await tx.unsafe(statement, args);
    const [{ xid }] = (await tx.unsafe("SELECT pg_current_xact_id()::text::bigint AS xid")) as [{ xid: string }];
    return {
      xid: Number(xid),
      async commit() {
        await tx.unsafe("COMMIT");
        tx.release();
      },
    };
  }

  test("a row its writer commits after a later writer's is read by the next delta; one from the newest id seen misses it", async () => {
    const start = await delta(null);
    expect(start.rows).toEqual([]);
    const a = await open(REPORT, "held-a");
    await sql.unsafe(REPORT, ["late-b"]);
    const first = await delta(start.horizon);
    expect(names(first.rows)).toEqual(["late-b"]);
    expect(first.horizon).toBeLessThanOrEqual(a.xid); // a was still open at that look
    await a.commit();
    const second = await delta(first.horizon);
    expect(names(second.rows)).toContain("held-a");
    // What a delta from the newest writer seen (a row version's way) would have read: nothing.
    const newest = Math.max(...((await sql.unsafe("SELECT wxid::text::bigint AS x FROM worktrees WHERE agent_id = 'late-b'")) as { x: string }[]).map((r) => Number(r.x)));
    expect(await sql.unsafe("SELECT agent_id FROM worktrees WHERE wxid > $1::bigint::text::xid8", [newest])).toEqual([]);
    // With nothing in flight the horizon passes both writers, and a delta from it reads neither again.
    let last = second;
    await until("the horizon past both writers", async () => (last = await delta(last.horizon)).horizon > newest, 10_000);
    expect(names((await delta(last.horizon)).rows)).toEqual([]);
  });

  test("a key its deleter commits after a later deleter's is read as gone by the next delta", async () => {
    await sql.unsafe(REPORT, ["gone-c"]);
    await sql.unsafe(REPORT, ["gone-d"]);
    const before = await delta(null);
    expect(before.gone).toBeUndefined(); // a whole read reads no deleted keys
    const c = await open("DELETE FROM worktrees WHERE agent_id = 'gone-c'");
    await sql.unsafe("DELETE FROM worktrees WHERE agent_id = 'gone-d'");
    const first = await delta(before.horizon);
    expect(first.gone!.map((key) => key[0])).toEqual(["gone-d"]);
    await c.commit();
    const second = await delta(first.horizon);
    expect(second.gone!.map((key) => key[0])).toContain("gone-c");
    expect(names(second.rows)).not.toContain("gone-c");
  });

  test("a report whose only change is its times keeps its writer's id: a delta does not read it again; a change of what it says does", async () => {
    await sql.unsafe(REPORT, ["times-f"]);
    let at = (await delta(null)).horizon;
    const [{ x: written }] = (await sql.unsafe("SELECT wxid::text::bigint AS x FROM worktrees WHERE agent_id = 'times-f'")) as [{ x: string }];
    await until("the horizon past its writer", async () => (at = (await delta(at)).horizon) > Number(written), 10_000);
    await sql.unsafe("UPDATE worktrees SET reported_at = reported_at + 1, expires_at = expires_at + 1 WHERE agent_id = 'times-f'");
    expect(names((await delta(at)).rows)).not.toContain("times-f");
    await sql.unsafe("UPDATE worktrees SET dirty = '[\"x.ts\"]' WHERE agent_id = 'times-f'");
    expect(names((await delta(at)).rows)).toContain("times-f");
  });

  test("the trim of deleted keys raises their floor to the newest deleter it took, and where the store stands says it", async () => {
    await sql.unsafe(REPORT, ["trim-e"]);
    await sql.unsafe("DELETE FROM worktrees WHERE agent_id = 'trim-e'");
    const [{ x: deleter }] = (await sql.unsafe("SELECT max(wxid)::text::bigint AS x FROM airlock_gone")) as [{ x: string }];
    expect((await store.read(standing(0))).rows.xfloor).toBe(0);
    // Every key's row version falls below the floor the next bump computes: it trims them all.
    await sql.unsafe("SELECT setval('airlock_row_ver', (SELECT last_value FROM airlock_row_ver) + 200000)");
    const hooks = { concernedDaemons: () => new Set<string>() } as unknown as ClusterHooks;
    const bump = new VersionSync(hooks, "horizon-test").bump(new Set(["worktrees"]), true)!;
    await sql.unsafe(bump.text, bump.args);
    expect(await sql.unsafe("SELECT key FROM airlock_gone")).toEqual([]);
    expect((await store.read(standing(0))).rows.xfloor).toBe(Number(deleter));
    // A bump that trims nothing leaves it.
    await sql.unsafe(bump.text, bump.args);
    expect((await store.read(standing(0))).rows.xfloor).toBe(Number(deleter));
  });
});
