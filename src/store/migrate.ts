// Numbered migrations, embedded in the binary (text imports are bundled by `bun build --compile`).
// PRAGMA user_version records how many have run; each runs in its own transaction.
import type { Database } from "bun:sqlite";
import { AirlockError } from "../errors.ts";
import m001 from "./migrations/001-init.sql" with { type: "text" };
import m002 from "./migrations/002-pools-journal.sql" with { type: "text" };
import m003 from "./migrations/003-path-claims.sql" with { type: "text" };
import m004 from "./migrations/004-locks-in-place.sql" with { type: "text" };
import m005 from "./migrations/005-ui-sessions.sql" with { type: "text" };
import m006 from "./migrations/006-waiters.sql" with { type: "text" };
import m007 from "./migrations/007-call-tasks.sql" with { type: "text" };
import m008 from "./migrations/008-messages.sql" with { type: "text" };
import m009 from "./migrations/009-messages-held.sql" with { type: "text" };
import m010 from "./migrations/010-worktrees.sql" with { type: "text" };
import m011 from "./migrations/011-tasks-finished.sql" with { type: "text" };
import m012 from "./migrations/012-counters-exact.sql" with { type: "text" };

export const MIGRATIONS: readonly string[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012];

export function migrate(db: Database): number {
  const row = db.query("PRAGMA user_version").get() as { user_version: number };
  const current = row.user_version;
  if (current > MIGRATIONS.length) {
    throw new AirlockError(
      "config",
      `the database has schema version ${current}, newer than this airlock understands (${MIGRATIONS.length}); upgrade airlock or use another --db`,
    );
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    }).immediate();
  }
  return MIGRATIONS.length;
}
