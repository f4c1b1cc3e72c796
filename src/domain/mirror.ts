// A catch-up on a shared store that applies only what changed (docs/cluster.md, "Catch-up by
// deltas"). A primitive whose memory mirrors a table (the path index, the working trees) used to
// throw that memory away and rebuild it from every row whenever another daemon wrote the table:
// every glob compiled and indexed again, for each write of each daemon. reconcile compares the
// rows with the memory itself (not with a record of what was last read, which this daemon's own
// changes would leave behind) and touches only the entries that differ: a row that is new or
// changed is put, an entry that no row has any more is dropped, and the rest stay as they are,
// their timers included.

/** How many entries a reconcile put and dropped (the rest were already the rows). */
export interface Reconciled {
  put: number;
  dropped: number;
}

/**
 * Brings `memory` (keyed as `key` keys the rows) up to `rows`: `put` for each row with no entry
 * or an entry that is not the `same`, `drop` for each entry whose key no row has.
 */
export function reconcile<R, M>(
  rows: Iterable<R>,
  memory: ReadonlyMap<string, M>,
  key: (row: R) => string,
  same: (row: R, entry: M) => boolean,
  put: (row: R) => void,
  drop: (key: string, entry: M) => void,
): Reconciled {
  const seen = new Set<string>();
  const puts: R[] = [];
  for (const row of rows) {
    const k = key(row);
    seen.add(k);
    const entry = memory.get(k);
    if (entry === undefined || !same(row, entry)) puts.push(row);
  }
  const drops = [...memory].filter(([k]) => !seen.has(k));
  // Drops first: a put never meets an entry that is about to go.
  for (const [k, entry] of drops) drop(k, entry);
  for (const row of puts) put(row);
  return { put: puts.length, dropped: drops.length };
}
