// How the journal writes an entry (journal.ts): the INSERT of one entry from the values a body
// has, and the entry whose data the row a body's last statement returned gives (last(): it goes
// with that statement, docs/cluster.md, "A row batch in one flight").
import type { FromReturned, SQLQueryBindings } from "../store/tx.ts";

export interface RecordFields {
  agentId?: string | null | undefined;
  reason?: string | null | undefined;
  data?: Record<string, unknown> | undefined;
}

/**
 * An entry's data from the row a body's last statement returned (last()): `data`, an SQL
 * expression over that row's columns making the same JSON text JSON.stringify would, and
 * `args`, the values of its placeholders. SQL both stores accept.
 */
export interface DataFromRow {
  data: string;
  args: SQLQueryBindings[];
  /** The entry's agent as a column of that row (a lock's holder, renewed by its token), instead of a value. */
  agentId?: string;
  /** Its resource as a column of that row (a task's queue, renewed by its id), instead of a value (Journal.lastRecorded wakes the watchers of the row's). */
  resource?: string;
  /** Writes from the same row that go with the entry, ahead of it (a message's recipients). */
  with?: readonly FromReturned[];
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

/** The entry of a change whose data the returned row gives (DataFromRow), as a write for last(). */
export function entryFromRow(at: number, kind: string, resource: string, f: Omit<RecordFields, "data">, row: DataFromRow): FromReturned {
  const bound = [...(row.resource === undefined ? [resource] : []), ...(row.agentId === undefined ? [f.agentId ?? null] : [])];
  return {
    into: "journal (at, kind, resource, agent_id, reason, data)",
    select: `?, ?, ${row.resource ?? "?"}, ${row.agentId ?? "?"}, ?, ${row.data}`,
    args: [at, kind, ...bound, f.reason ?? null, ...row.args],
  };
}
