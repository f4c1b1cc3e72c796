// What the PostgreSQL store smooths over between the dialects, so the domain's SQL is written
// once (docs/cluster.md):
// - placeholders (`?` → `$n`), the journal's revision (SQLite's lastInsertRowid → RETURNING)
//   and the table catalogue (sqlite_master → information_schema). The domain writes the rest in
//   SQL both accept (test/store/pg.test.ts has PostgreSQL prepare every statement it writes);
// - numbers: Bun's client hands int8 back as a string (as a BigInt with `bigint: true`) and
//   numeric always as a string, to keep precision; every integer in the schema is BIGINT
//   (milliseconds), COUNT is int8 and SUM of a BIGINT is numeric. The domain counts in JS
//   numbers, so int8 and numeric columns become numbers here, by the column's type, never by
//   the look of a value (a note whose value is "123" stays a string).

/** The database's clock in integer milliseconds, as every time in the schema is written. */
export const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
/** Type OIDs that Bun returns as strings: int8 and numeric. */
const NUMERIC_TYPES = new Set([20, 1700]);

export interface Translated {
  /** The statement for "get" and "all". */
  text: string;
  /** The statement for "run": a journal insert returns its revision. */
  runText: string;
  /** Whether runText returns the revision that becomes lastInsertRowid. */
  returnsRevision: boolean;
  /** Whether it changes rows (a get of an UPSERT ... RETURNING does): the shared version moves. */
  writes: boolean;
  /** The table it writes, if it writes ("*" when that cannot be told: every cache is stale). */
  table: string | null;
}

const TABLE_EXISTS_SQLITE = /^SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = \?$/i;
const TABLE_EXISTS_PG =
  "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name = $1";

// A string literal, a quoted identifier or a comment (kept as they are), or a placeholder.
const PLACEHOLDER = /'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\?/g;

/**
 * SQLite's SQL, as the domain writes it, in PostgreSQL's dialect. The domain writes SQL both
 * accept (a qualified column in an upsert's SET, an alias on a subquery in FROM, BIGINT-sized
 * integers), so only the placeholders, the one catalogue query and the journal's revision differ.
 */
export function translate(sql: string): Translated {
  if (TABLE_EXISTS_SQLITE.test(sql.replace(/\s+/g, " ").trim())) {
    return { text: TABLE_EXISTS_PG, runText: TABLE_EXISTS_PG, returnsRevision: false, writes: false, table: null };
  }
  let param = 0;
  const text = sql.replace(PLACEHOLDER, (t) => (t === "?" ? `$${++param}` : t));
  // SQLite's lastInsertRowid is the journal's revision; PostgreSQL says it with RETURNING.
  const returnsRevision = /^\s*INSERT\s+INTO\s+journal\b/i.test(text) && !/\bRETURNING\b/i.test(text);
  // A write, or a WITH whose first part writes (`WITH d AS (DELETE FROM t ...) SELECT ...`).
  const write = /^\s*(?:WITH\s+[a-z_][a-z0-9_]*\s+AS\s+\(\s*)?((?:INSERT|UPDATE|DELETE)\b[\s\S]*)$/i.exec(text)?.[1];
  const writes = write !== undefined;
  const table = writes ? (/^(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)\b/i.exec(write)?.[1]?.toLowerCase() ?? "*") : null;
  return { text, runText: returnsRevision ? `${text} RETURNING revision` : text, returnsRevision, writes, table };
}

/** A statement's result as Bun's client gives it. */
export interface PgResult extends Array<Record<string, unknown>> {
  columns?: { name: string; type: number }[];
  affectedRows?: number;
  command?: string | null;
}

/** Rows as plain objects, with int8 and numeric columns as numbers. */
export function rowsOf(result: PgResult, limit = result.length): Record<string, unknown>[] {
  const columns = result.columns ?? [];
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < Math.min(limit, result.length); i++) {
    const from = result[i]!;
    const row: Record<string, unknown> = {};
    for (const c of columns) {
      const v = from[c.name];
      row[c.name] = v !== null && v !== undefined && NUMERIC_TYPES.has(c.type) ? Number(v) : v;
    }
    rows.push(row);
  }
  return rows;
}
