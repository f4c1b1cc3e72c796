// The rows a shared store's catch-up reads for a refresh (docs/cluster.md, "Catch-up by
// deltas"): on PostgreSQL the tables a daemon mirrors or arms timers from carry `ver`, stamped
// from one sequence at every insert and update (migrations 010 and 011), so a refresh that applied
// every change up to a row version reads only the rows above it. Its own module, apart from
// mirror.ts (which also reads the deleted keys: deltaSince), so a primitive that needs no
// deleted keys does not read their table.
import { all, reading, type Stmt, type Tx } from "../store/tx.ts";

/**
 * A table's rows for a refresh: with `since` (a delta), every row stamped above that row version,
 * whether or not it matches `where` now (a lock released, a lease ended: the caller judges);
 * without, every row that matches `where` (all of them, when there is none). The table, the
 * condition and the order are our own SQL, never a caller's input.
 */
export function* rowsSince<R>(table: string, since: number | null, where?: string, order?: string): Tx<R[]> {
  if (since !== null) return yield* all<R>(aboveText(table, order), since);
  return yield* all<R>(`SELECT * FROM ${table}${where === undefined ? "" : ` WHERE ${where}`}${orderBy(order)}`);
}

const orderBy = (order?: string) => (order === undefined ? "" : ` ORDER BY ${order}`);

/** The rows of `table` stamped above a row version (its one value), in `order`. */
export const aboveText = (table: string, order?: string) => `SELECT * FROM ${table} WHERE ver > ?${orderBy(order)}`;

/** What rowsSince(table, since, …, order) reads with a version: for a shared store's BEGIN to send ahead (Primitive.reads). */
export const rowsAhead = (table: string, since: number, order?: string): Stmt[] => [reading.all(aboveText(table, order), since)];
