// One statement a body yields, sent on the PostgreSQL store's connection (driver.ts): its text
// translated once (dialect.ts) and kept, the savepoint of a batch's body opened with its first
// statement in the same round trip, the tables it changed noted for the version, and its result
// turned back into the shape the domain's transactions read (../tx.ts), SQLite's shape.
import type { RunResult, Stmt } from "../tx.ts";
import type { Connection, Link } from "./connection.ts";
import { type PgResult, rowsOf, type Translated, translate } from "./dialect.ts";

/**
 * What one transaction being driven keeps while its statements run: the main connection's batch,
 * or a read beside it on the reader (readBeside). Its body's own code sees it as `current`.
 */
export interface Run {
  /** The connection it runs on (whose failure() judges a statement's error). */
  via: Connection;
  /**
   * In a batch of several bodies: whether the running body still has to open its savepoint
   * (with its first statement), and whether one is open already (a previous body's).
   */
  savepoint: { due: boolean; open: boolean } | null;
  /** The tables it changed (its version records them for the others). */
  written: Set<string>;
  /** A statement of the running body failed (the body may have caught it and gone on). */
  statementFailed: boolean;
  /** A batch of row bodies, or a read beside them: in the shared order. */
  shared: boolean;
  /** A batch of row bodies: the writes held for its COMMIT (runLater), in the order yielded. */
  later?: Stmt[];
}

/** Savepoint texts: before a body's first statement (after the first body's, release it too). */
const SAVEPOINT = "SAVEPOINT body";
const NEXT_SAVEPOINT = "RELEASE SAVEPOINT body; SAVEPOINT body";
export const UNDO_BODY = "ROLLBACK TO SAVEPOINT body";

function translated(translations: Map<string, Translated>, sql: string): Translated {
  let t = translations.get(sql);
  if (!t) {
    t = translate(sql);
    translations.set(sql, t);
  }
  return t;
}

/** An INSERT of one row of placeholders, which several of can join into one statement. */
const ONE_ROW = /^(\s*INSERT\s+INTO\s+[a-z_][a-z0-9_]*\s*\([^)]*\)\s*VALUES\s*)(\(\s*\?(?:\s*,\s*\?)*\s*\))\s*$/i;
/** The most rows one joined INSERT carries (a body may hold many: a note per expired key). */
export const JOINED_ROWS = 64;

/**
 * The writes a batch held for its COMMIT (runLater), as statements to send, in the order they
 * were held: each run of one-row INSERTs of the same statement joined into one INSERT of all
 * their rows, up to JOINED_ROWS (the journal's entries of a batch of row bodies: one statement,
 * not one per body); anything else as it was.
 */
export function joinHeld(later: readonly Stmt[]): { sql: string; args: Stmt["args"] }[] {
  const out: { sql: string; args: Stmt["args"] }[] = [];
  for (let i = 0; i < later.length; ) {
    const first = later[i]!;
    const one = ONE_ROW.exec(first.sql);
    let j = i + 1;
    if (one) while (j < later.length && j - i < JOINED_ROWS && later[j]!.sql === first.sql) j++;
    const group = later.slice(i, j);
    out.push({ sql: group.length === 1 ? first.sql : `${one![1]}${group.map(() => one![2]).join(", ")}`, args: group.flatMap((s) => s.args) });
    i = j;
  }
  return out;
}

/**
 * Sends the writes a batch held for its COMMIT (joinHeld), pipelined, just before the COMMIT
 * is. The promises of their answers, each already guarded against an unhandled rejection (a
 * failure shows in the COMMIT's ROLLBACK, and the caller reads them then).
 */
export function sendLater(translations: Map<string, Translated>, l: Link, later: readonly Stmt[]): Promise<unknown>[] {
  return joinHeld(later).map(({ sql, args }) => {
    const sent = l.conn.unsafe(translated(translations, sql).text, args).execute() as unknown as Promise<unknown>;
    sent.catch(() => undefined);
    return sent;
  });
}

/** Sends one yielded statement (or a gather of reads, pipelined) and answers its result in SQLite's shape. */
export async function execStatement(translations: Map<string, Translated>, l: Link, run: Run, stmt: Stmt): Promise<unknown> {
  // A gather: each statement sent as this loop reaches it (the first opening the savepoint,
  // if one is due), all before any answer is awaited; the server runs them in the order sent.
  if (stmt.reads) return Promise.all(stmt.reads.map((r) => execStatement(translations, l, run, r)));
  const t = translated(translations, stmt.sql);
  // Held for the COMMIT (sendLater): a write that inserts a row always changes one.
  if (stmt.later && run.later) {
    run.later.push(stmt);
    run.written.add(t.table ?? "*");
    return undefined;
  }
  // A body of a batch opens its savepoint with its first statement, in the same round trip.
  const sp = run.savepoint;
  let opening: Promise<unknown> | undefined;
  if (sp?.due) {
    opening = l.conn.unsafe(sp.open ? NEXT_SAVEPOINT : SAVEPOINT).execute();
    sp.due = false;
    sp.open = true;
  }
  let result: PgResult;
  try {
    result = (await l.conn.unsafe(stmt.mode === "run" ? t.runText : t.text, stmt.args)) as PgResult;
  } catch (err) {
    run.statementFailed = true;
    await opening?.catch(() => undefined);
    throw err;
  }
  if (opening) await opening;
  // Only a statement that changed rows moves the shared version (a DELETE that found nothing
  // must not send every other daemon to catch up, and them back to this one).
  if ((stmt.mode === "run" || t.writes) && (result.affectedRows ?? result.length) > 0) run.written.add(t.table ?? "*");
  if (stmt.mode === "all") return rowsOf(result);
  if (stmt.mode === "get") return rowsOf(result, 1)[0] ?? null;
  const lastInsertRowid = t.returnsRevision ? Number(rowsOf(result, 1)[0]?.revision) : 0;
  return { changes: result.affectedRows ?? 0, lastInsertRowid } satisfies RunResult;
}
