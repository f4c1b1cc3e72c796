// How the journal writes an entry (journal.ts): the INSERT of one entry from the values a body
// has, and the same INSERT whose data the row a body just wrote gives (for last(): the entry
// goes in the same flight as that write, docs/cluster.md, "A row batch in one flight").
import type { SQLQueryBindings, Stmt } from "../store/tx.ts";

export interface RecordFields {
  agentId?: string | null | undefined;
  reason?: string | null | undefined;
  data?: Record<string, unknown> | undefined;
}

/**
 * An entry's data read from a row: `data`, an SQL expression over the row's columns that makes
 * the same JSON text JSON.stringify would; `from`, the table and the WHERE that finds the row;
 * `args`, the values of their placeholders, in order. SQL both stores accept.
 */
export interface DataFromRow {
  data: string;
  from: string;
  args: SQLQueryBindings[];
}

/** One entry, as record and recordFence write it (one statement, so a batch's entries join into one). */
export const INSERT_ENTRY = "INSERT INTO journal (at, kind, resource, agent_id, reason, data) VALUES (?, ?, ?, ?, ?, ?)";

export const entryArgs = (at: number, kind: string, resource: string, f: RecordFields): SQLQueryBindings[] => [
  at,
  kind,
  resource,
  f.agentId ?? null,
  f.reason ?? null,
  f.data ? JSON.stringify(f.data) : null,
];

/** The entry of a change whose data a row gives (DataFromRow), as a statement for last() to send. */
export function entryFromRow(at: number, kind: string, resource: string, f: Omit<RecordFields, "data">, row: DataFromRow): Stmt {
  return {
    sql: `INSERT INTO journal (at, kind, resource, agent_id, reason, data) SELECT ?, ?, ?, ?, ?, ${row.data} FROM ${row.from}`,
    args: [at, kind, resource, f.agentId ?? null, f.reason ?? null, ...row.args],
    mode: "run",
  };
}
