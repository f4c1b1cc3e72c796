// The two dialects' schemas are written twice (src/store/migrations/*.sql for SQLite,
// src/store/migrations/pg/*.sql for PostgreSQL); this test keeps them one schema. Each is applied
// to a fresh database by the real migrate code and read back from the database's own catalogue:
// tables, columns by type class and nullability, primary keys, unique keys, indexes (columns,
// order, WHERE) and foreign keys. A table on one store only, or an accepted difference, is
// listed below with its reason; a list entry that no longer holds fails too, so the lists stay
// true. The PostgreSQL half needs AIRLOCK_TEST_PG (skipped without it, as the other PG suites).
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { migrate } from "../../src/store/migrate.ts";
import { openPgStore } from "../../src/store/pg/index.ts";
import { describePg, freshDatabase, withClient } from "../helpers/pg.ts";
import { type Accepted, differences, pgSchema, type Schema, sqliteSchema } from "./schema.ts";

/** Tables PostgreSQL has and SQLite has not, on purpose. */
const ONLY_POSTGRES: Readonly<Record<string, string>> = {
  airlock_schema: "the migration version; SQLite keeps it in PRAGMA user_version",
  airlock_sync: "the cluster version every writing transaction bumps (docs/cluster.md); one daemon per SQLite file needs none",
  airlock_changes: "which tables each cluster version changed, for a catching-up daemon",
  daemons: "each daemon's heartbeat on a shared store",
  grants: "a grant to another daemon's blocked call, until that daemon answers it",
  hosts: "when each machine last had a live daemon, for slots bound to processes on a machine gone for long",
  airlock_gone: "the keys of deleted rows above a row version, for another daemon's catch-up by deltas (docs/cluster.md)",
};

/** Tables SQLite has and PostgreSQL has not, on purpose. */
const ONLY_SQLITE: Readonly<Record<string, string>> = {};

/** Differences inside tables both stores have, on purpose. */
const ACCEPTED: readonly Accepted[] = [
  {
    what: "slots.rowid",
    only: "postgres",
    why: "SQLite's implicit rowid, written out: slots granted in the same millisecond are ordered by insertion (ORDER BY acquired_at, rowid)",
  },
  ...["path_claims", "worktrees", "waiters", "locks", "agents", "tasks", "slots", "fences"].flatMap((t): Accepted[] => [
    { what: `${t}.ver`, only: "postgres", why: "the row version a trigger stamps, read by another daemon's catch-up by deltas; one daemon per SQLite file has no catch-up" },
    { what: `${t} index ${t}_ver (ver)`, only: "postgres", why: "the catch-up by deltas reads the rows above a row version" },
  ]),
  { what: "worktrees.wxid", only: "postgres", why: "its writer's transaction id, for the deltas by horizon beside the row bodies that write reports (migration 016)" },
  { what: "worktrees index worktrees_wxid (wxid)", only: "postgres", why: "a delta by horizon reads the rows at or above a transaction id" },
];

function sqliteFresh(): Schema {
  const db = new Database(":memory:", { strict: true });
  try {
    migrate(db);
    return sqliteSchema(db);
  } finally {
    db.close();
  }
}

/** Tables on one side only that no list names, and list entries that no longer hold. */
function tableDifferences(lite: Schema, pg: Schema): string[] {
  const out: string[] = [];
  for (const t of lite.keys()) if (!pg.has(t) && !(t in ONLY_SQLITE)) out.push(`table ${t}: only on SQLite (add it to PostgreSQL, or to ONLY_SQLITE with the reason)`);
  for (const t of pg.keys()) if (!lite.has(t) && !(t in ONLY_POSTGRES)) out.push(`table ${t}: only on PostgreSQL (add it to SQLite, or to ONLY_POSTGRES with the reason)`);
  for (const t of Object.keys(ONLY_SQLITE)) if (!lite.has(t) || pg.has(t)) out.push(`ONLY_SQLITE names ${t}, which is not a SQLite-only table now: remove the entry`);
  for (const t of Object.keys(ONLY_POSTGRES)) if (!pg.has(t) || lite.has(t)) out.push(`ONLY_POSTGRES names ${t}, which is not a PostgreSQL-only table now: remove the entry`);
  for (const a of ACCEPTED) {
    const side = a.only === "sqlite" ? "SQLite" : "PostgreSQL";
    if (differences(lite, pg, ACCEPTED.filter((x) => x !== a)).includes(`${a.what}: only on ${side}`)) continue;
    out.push(`ACCEPTED names ${a.what} (${a.only} only), which is no longer a difference: remove the entry`);
  }
  return out;
}

describe("the SQLite schema, as the parity test reads it", () => {
  const lite = sqliteFresh();

  test("is read from a freshly migrated database: every table, its key, its indexes and foreign keys", () => {
    expect(lite.size).toBeGreaterThanOrEqual(12); // 13 tables when written
    expect(lite.get("tasks")?.primaryKey).toEqual(["id"]);
    expect([...(lite.get("tasks")?.indexes ?? [])].sort()).toEqual([
      "UNIQUE (lease_token)",
      "tasks_finished (finished_at) WHERE finished_at is not null",
      "tasks_lease_agent (lease_agent) WHERE state = 'claimed'",
      "tasks_pending (queue, state, priority DESC, id)",
    ]);
    expect([...(lite.get("slots")?.foreignKeys ?? [])]).toEqual(["(pool) → pools (name)"]);
    expect(lite.get("locks")?.columns.get("agent_id")).toEqual({ cls: "text", notNull: false });
  });

  test("the comparison finds a column, a type class, a nullability, an index and a foreign key that differ", () => {
    const other = new Database(":memory:", { strict: true });
    try {
      migrate(other);
      other.exec("ALTER TABLE notes ADD COLUMN extra REAL");
      other.exec("CREATE INDEX counters_value ON counters(value DESC)");
      other.exec("DROP INDEX path_claims_agent");
      other.exec("CREATE TABLE ui_sessions_x (id_hash BLOB PRIMARY KEY, created_at INTEGER, expires_at INTEGER NOT NULL REFERENCES pools(name)) STRICT");
      other.exec("DROP TABLE ui_sessions");
      other.exec("ALTER TABLE ui_sessions_x RENAME TO ui_sessions");
      const changed = sqliteSchema(other);
      expect(differences(lite, lite, [])).toEqual([]);
      expect(differences(changed, lite, [])).toEqual([
        "counters index counters_value (value DESC): only on SQLite",
        "notes.extra: only on SQLite",
        "path_claims index path_claims_agent (agent_id): only on PostgreSQL",
        "ui_sessions foreign key (expires_at) → pools (name): only on SQLite",
        "ui_sessions.created_at: nullable on SQLite, NOT NULL on PostgreSQL",
        "ui_sessions.id_hash: blob on SQLite, text on PostgreSQL",
      ]);
      expect(differences(changed, lite, [{ what: "notes.extra", only: "sqlite", why: "a test" }])).not.toContain("notes.extra: only on SQLite");
    } finally {
      other.close();
    }
  });
});

describePg("the SQLite and PostgreSQL schemas", () => {
  test("have the same tables, columns by type class, keys, indexes and foreign keys, but for the listed differences", async () => {
    const lite = sqliteFresh();
    const db = await freshDatabase();
    try {
      const store = await openPgStore(db.url); // the real migrations, as a daemon runs them
      await store.close();
      const pg = await withClient(db.url, pgSchema);
      expect(pg.get("tasks")?.primaryKey).toEqual(["id"]); // the catalogue was read
      expect([...tableDifferences(lite, pg), ...differences(lite, pg, ACCEPTED)]).toEqual([]);
    } finally {
      await db.drop();
    }
  });
});
