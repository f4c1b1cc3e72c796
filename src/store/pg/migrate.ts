// The PostgreSQL schema's migrations, numbered and embedded in the binary (text imports are
// bundled by `bun build --compile`), as SQLite's are (../migrate.ts). `airlock_schema` records
// how many have run; each runs in its own transaction. A new migration is one more file in
// ../migrations/pg/ and one more entry in PG_MIGRATIONS.
import type { ReservedSQL } from "bun";
import { AirlockError } from "../../errors.ts";
import m001 from "../migrations/pg/001-schema.sql" with { type: "text" };
import m002 from "../migrations/pg/002-cluster.sql" with { type: "text" };
import m003 from "../migrations/pg/003-changes.sql" with { type: "text" };
import m004 from "../migrations/pg/004-hosts.sql" with { type: "text" };
import m005 from "../migrations/pg/005-waiters.sql" with { type: "text" };
import m006 from "../migrations/pg/006-call-tasks.sql" with { type: "text" };
import m007 from "../migrations/pg/007-messages.sql" with { type: "text" };
import m008 from "../migrations/pg/008-messages-held.sql" with { type: "text" };
import m009 from "../migrations/pg/009-worktrees.sql" with { type: "text" };
import m010 from "../migrations/pg/010-row-versions.sql" with { type: "text" };
import m011 from "../migrations/pg/011-more-row-versions.sql" with { type: "text" };
import m012 from "../migrations/pg/012-tasks-finished.sql" with { type: "text" };
import m013 from "../migrations/pg/013-claims-moved.sql" with { type: "text" };
import m014 from "../migrations/pg/014-room-fences-versions.sql" with { type: "text" };
import m015 from "../migrations/pg/015-counters-exact.sql" with { type: "text" };
import m016 from "../migrations/pg/016-worktrees-horizon.sql" with { type: "text" };
import m017 from "../migrations/pg/017-daemon-channels.sql" with { type: "text" };

export const PG_MIGRATIONS: readonly string[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m013, m014, m015, m016, m017];

/** The migrations' session lock: the bytes of "airlock!" as a big-endian int64. */
const MIGRATION_LOCK = "7019267304284449569";

const SCHEMA_KNOWN = "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'airlock_schema'";

/** A reader's check: the schema is this binary's (a reader never migrates). */
export async function checkSchema(conn: ReservedSQL, path: string): Promise<void> {
  const known = await conn.unsafe(SCHEMA_KNOWN);
  const rows = known.length === 0 ? [] : ((await conn.unsafe("SELECT version FROM airlock_schema")) as { version: number }[]);
  const version = rows[0]?.version ?? 0;
  if (version === 0) throw new AirlockError("config", `no Airlock state in ${path} yet (a daemon started with --store creates it)`);
  if (version !== PG_MIGRATIONS.length) {
    throw new AirlockError(
      "config",
      `${path} has schema version ${version}, this airlock reads version ${PG_MIGRATIONS.length}; use the airlock the daemons run${version < PG_MIGRATIONS.length ? ", or start a daemon of this version to migrate it" : ""}`,
    );
  }
}

export async function migrate(conn: ReservedSQL): Promise<void> {
  // A session lock, held across the migrations' own transactions: a second daemon starting at
  // the same time waits here, then finds the schema current.
  await conn.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
  try {
    // Looked up before creating, so a runtime role without CREATE on the schema can start once
    // an owner has migrated.
    const known = await conn.unsafe(SCHEMA_KNOWN);
    if (known.length === 0) await conn.unsafe("CREATE TABLE airlock_schema (version INT NOT NULL)");
    const rows = (await conn.unsafe("SELECT version FROM airlock_schema")) as { version: number }[];
    if (rows.length === 0) await conn.unsafe("INSERT INTO airlock_schema (version) VALUES (0)");
    const current = rows[0]?.version ?? 0;
    if (current > PG_MIGRATIONS.length) {
      throw new AirlockError(
        "config",
        `the database has schema version ${current}, newer than this airlock understands (${PG_MIGRATIONS.length}); upgrade airlock or use another --store`,
      );
    }
    for (let v = current; v < PG_MIGRATIONS.length; v++) {
      await conn.unsafe("BEGIN");
      try {
        await conn.unsafe(PG_MIGRATIONS[v]!);
        await conn.unsafe(`UPDATE airlock_schema SET version = ${v + 1}`);
        await conn.unsafe("COMMIT");
      } catch (err) {
        await conn.unsafe("ROLLBACK").catch(() => undefined);
        throw err;
      }
    }
  } finally {
    await conn.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
  }
}
