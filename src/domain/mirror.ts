// A catch-up on a shared store that applies only what changed (docs/cluster.md, "Catch-up by
// deltas"). A primitive whose memory mirrors a table (the path index, the working trees) used to
// throw that memory away and rebuild it from every row whenever another daemon wrote the table:
// every glob compiled and indexed again, for each write of each daemon. reconcile compares the
// rows with the memory itself (not with a record of what was last read, which this daemon's own
// changes would leave behind) and touches only the entries that differ: a row that is new or
// changed is put, an entry that no row has any more is dropped, and the rest stay as they are,
// their timers included. On a table that carries row versions the catch-up reads only the rows
// and the deleted keys above what it applied (a delta: deltaSince, one round trip), and reconcile
// takes those alone.
import { gather, type Read, reading, type Tx } from "../store/tx.ts";
import { aboveText, rowsSince } from "./row-versions.ts";

/** How many entries a reconcile put and dropped (the rest were already the rows). */
export interface Reconciled {
  put: number;
  dropped: number;
}

/**
 * Brings `memory` (keyed as `key` keys the rows) up to `rows`: `put` for each row with no entry
 * or an entry that is not the `same`, `drop` for each entry whose key no row has. With `gone`,
 * `rows` are only the rows that changed (a delta: every other entry is left alone) and `gone`
 * the keys deleted meanwhile; an entry is dropped when its key is gone and no row brings it back.
 */
export function reconcile<R, M>(
  rows: Iterable<R>,
  memory: ReadonlyMap<string, M>,
  key: (row: R) => string,
  same: (row: R, entry: M) => boolean,
  put: (row: R) => void,
  drop: (key: string, entry: M) => void,
  gone?: Iterable<string>,
): Reconciled {
  const seen = new Set<string>();
  const puts: R[] = [];
  for (const row of rows) {
    const k = key(row);
    seen.add(k);
    const entry = memory.get(k);
    if (entry === undefined || !same(row, entry)) puts.push(row);
  }
  const candidates = gone === undefined ? memory.keys() : gone;
  const drops: [string, M][] = [];
  for (const k of new Set(candidates)) {
    const entry = memory.get(k);
    if (entry !== undefined && !seen.has(k)) drops.push([k, entry]);
  }
  // Drops first: a put never meets an entry that is about to go.
  for (const [k, entry] of drops) drop(k, entry);
  for (const row of puts) put(row);
  return { put: puts.length, dropped: drops.length };
}

/**
 * What a mirror of `table` reads to follow its rows: with `since` (a delta), the rows stamped
 * above that row version and the keys deleted above it (each as its key's columns, in order, as
 * the PostgreSQL store's trigger keeps them: migration 010), and the rows of `also` (a query of
 * another table taking the same version: the room fences beside the claims), read together in
 * one round trip; without, every row (`gone` undefined: reconcile drops what no row has; `also`
 * not read).
 */
export function* deltaSince<R, A = never>(table: string, since: number | null, order?: string, also?: string): Tx<{ rows: R[]; gone: string[][] | undefined; also?: A[] }> {
  if (since === null) return { rows: yield* rowsSince<R>(table, null, undefined, order), gone: undefined };
  const [rows, gone, more] = (yield* gather(...deltaReads(table, since, order, also))) as [R[], { key: string }[], A[] | undefined];
  return { rows, gone: gone.map((r) => JSON.parse(r.key) as string[]), ...(more ? { also: more } : {}) };
}

/**
 * The statements deltaSince(table, since, order, also) sends, as it sends them: what a shared
 * store's BEGIN may send ahead when another daemon wrote the table (Primitive.reads).
 */
export function deltaReads(table: string, since: number, order?: string, also?: string): Read<unknown[]>[] {
  return [
    reading.all(aboveText(table, order), since),
    reading.all("SELECT key FROM airlock_gone WHERE tbl = ? AND ver > ?", table, since),
    ...(also === undefined ? [] : [reading.all(also, since)]),
  ];
}

/**
 * A delta by horizon (migration 016, docs/cluster.md "Working-tree reports beside the order"),
 * for a table that row bodies write beside the reads of it, where a row version read does not
 * bound the versions still to commit. Each row carries its writer's transaction id (`wxid`),
 * and a delta reads the rows (and deleted keys) at or above `since`, the horizon the delta
 * before it reached: the `xmin` of the snapshot that read it. Every transaction below that had
 * ended then, so what that snapshot did not see was written by one at or above it (or by one
 * that had no id yet, which gets one above it): this delta reads it. So a delta rereads the rows
 * of the transactions that were in flight at the last one (applying a row twice changes nothing).
 * `since` null: the whole table, and no deleted keys. The caller reads whole when deleted keys at
 * or above `since` may have been trimmed (RowVersions.xfloor).
 */
export function horizonReads(table: string, since: number | null): Read<unknown[]>[] {
  return [since === null ? reading.all(horizonText(table, false), 0) : reading.all(horizonText(table, true), table, since, since)];
}

/**
 * The rows of `table` whose writer's id is at or above a horizon (its last value), the horizon
 * of the snapshot that read them and, `gone`, the keys deleted at or above it (`gone_keys`, a
 * JSON array; null when none): one statement, one snapshot. At least one row, so the horizon
 * comes when no row matched too (then the table's columns are null and `found` is false).
 */
const horizonText = (table: string, gone: boolean) =>
  "SELECT h.horizon, h.gone_keys, t.wxid IS NOT NULL AS found, t.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon, " +
  (gone ? "(SELECT json_agg(g.key) FROM airlock_gone g WHERE g.tbl = ? AND g.wxid >= ?::bigint::text::xid8)" : "NULL::json") +
  ` AS gone_keys) h LEFT JOIN ${table} t ON t.wxid >= ?::bigint::text::xid8`;

/**
 * What horizonReads(table, since) answered: the rows, the keys deleted (each as its key's
 * columns; undefined for a whole read), and the horizon the next delta starts from.
 */
export function horizonDelta<R>(since: number | null, answers: readonly unknown[]): { rows: R[]; gone: string[][] | undefined; horizon: number } {
  const found = answers[0] as ({ horizon: number; gone_keys: string[] | null; found: boolean } & R)[];
  const head = found[0]!;
  return { rows: found.filter((r) => r.found), gone: since === null ? undefined : (head.gone_keys ?? []).map((k) => JSON.parse(k) as string[]), horizon: head.horizon };
}
