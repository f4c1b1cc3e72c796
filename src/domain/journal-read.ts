// Reading the journal (journal.ts): entries after a revision, filtered by the database, and
// cut at the first revision missing for a read beside writers in flight; what a watcher asks
// for (WatchFilter), and whether an entry is what it wants.
import { all, get, type Tx } from "../store/tx.ts";
import type { Waiter } from "./waiter.ts";

export interface JournalEntry {
  revision: number;
  at: number;
  /** Dotted: `pool.granted`, `path.denied`, `lock.granted`, ... */
  kind: string;
  /** What it happened to: a pool, a lock, a room, a queue. */
  resource: string;
  agentId?: string;
  reason?: string;
  /** The kind's own fields. */
  data?: Record<string, unknown>;
}

/** A journal row as stored. */
export interface JournalRow {
  revision: number;
  at: number;
  kind: string;
  resource: string;
  agent_id: string | null;
  reason: string | null;
  data: string | null;
}

export type SinceOptions = { limit?: number; kinds?: readonly string[]; resourcePrefix?: string };

/**
 * What matches() asks, as SQL over the journal's kind and resource (null: no filter): exact
 * kinds, kind prefixes ending in ".", a resource prefix; by characters, as JavaScript compares.
 */
function filterSql(f: { kinds?: readonly string[] | undefined; resourcePrefix?: string | undefined }): { sql: string; args: (string | number)[] } | null {
  const parts: string[] = [];
  const args: (string | number)[] = [];
  if (f.kinds && f.kinds.length > 0) {
    const kinds: string[] = [];
    for (const k of f.kinds) {
      if (k.endsWith(".")) {
        kinds.push("substr(kind, 1, ?) = ?");
        args.push([...k].length, k);
      } else {
        kinds.push("kind = ?");
        args.push(k);
      }
    }
    parts.push(`(${kinds.join(" OR ")})`);
  }
  if (f.resourcePrefix) {
    parts.push("substr(resource, 1, ?) = ?");
    args.push([...f.resourcePrefix].length, f.resourcePrefix);
  }
  return parts.length > 0 ? { sql: parts.join(" AND "), args } : null;
}

/**
 * Entries after `revision` that match, oldest first, and the newest revision read (`upTo`).
 * `contiguous`: stop before the first revision missing after `revision` (`cut` says one was),
 * for a read beside writers in flight (shared); in the exclusive order none is, so a gap there
 * is final (a rollback, or a trim) and is passed.
 */
export function* readAfter(revision: number, o: SinceOptions, contiguous: boolean): Tx<{ entries: JournalEntry[]; upTo: number; cut: boolean }> {
  const limit = o.limit ?? 1000;
  const filter = filterSql(o);
  if (filter) return yield* readFiltered(revision, limit, filter, contiguous);
  const rows = yield* all<JournalRow>("SELECT * FROM journal WHERE revision > ? ORDER BY revision LIMIT ?", revision, limit);
  const entries: JournalEntry[] = [];
  let upTo = revision;
  for (const r of rows) {
    if (contiguous && r.revision !== upTo + 1) return { entries, upTo, cut: true };
    upTo = r.revision;
    entries.push(toEntry(r));
  }
  return { entries, upTo, cut: false };
}

/**
 * readAfter with a filter, which the database applies: a watcher of a rare kind far behind
 * reads the rows it wants, not every row since (up to the whole journal, each materialized).
 * Contiguous: first where the run of revisions from `revision` + 1 ends (the first row whose
 * next revision is missing: the newest, or one before a gap; cut when it is not the newest),
 * then the matches up to there.
 */
function* readFiltered(revision: number, limit: number, f: { sql: string; args: (string | number)[] }, contiguous: boolean): Tx<{ entries: JournalEntry[]; upTo: number; cut: boolean }> {
  let end = Number.MAX_SAFE_INTEGER;
  let cut = false;
  if (contiguous) {
    const run = (yield* runAfter(revision))!;
    if (run.end === revision) return { entries: [], upTo: revision, cut: run.newest > revision };
    end = run.end;
    cut = end < run.newest;
  }
  const rows = yield* all<JournalRow>(`SELECT * FROM journal WHERE revision > ? AND revision <= ? AND ${f.sql} ORDER BY revision LIMIT ?`, revision, end, ...f.args, limit);
  const entries = rows.map(toEntry);
  if (entries.length >= limit) return { entries, upTo: entries[entries.length - 1]!.revision, cut: false };
  return { entries, upTo: contiguous ? end : revision, cut };
}

/**
 * The run of revisions after `revision`: where it ends (the first revision whose next one is
 * missing; `revision` itself when `revision` + 1 is missing or nothing follows), and the newest
 * revision after `revision` (`revision` when none). The end is cut when it is below the newest.
 * Null, without looking for the end, when more than `within` revisions follow (the index read
 * that finds the end walks the run).
 */
export function* runAfter(revision: number, within = Number.POSITIVE_INFINITY): Tx<{ end: number; newest: number } | null> {
  const after = yield* get<{ lo: number | null; hi: number | null }>("SELECT MIN(revision) AS lo, MAX(revision) AS hi FROM journal WHERE revision > ?", revision);
  if (after?.lo == null) return { end: revision, newest: revision };
  const newest = Number(after.hi);
  if (newest - revision > within) return null;
  if (Number(after.lo) !== revision + 1) return { end: revision, newest };
  const end = (yield* get<{ r: number }>(
    "SELECT revision AS r FROM journal j WHERE revision > ? AND NOT EXISTS (SELECT 1 FROM journal k WHERE k.revision = j.revision + 1) ORDER BY revision LIMIT 1",
    revision,
  ))!.r;
  return { end: Number(end), newest };
}

export function toEntry(r: JournalRow): JournalEntry {
  const e: JournalEntry = { revision: r.revision, at: r.at, kind: r.kind, resource: r.resource };
  if (r.agent_id !== null) e.agentId = r.agent_id;
  if (r.reason !== null) e.reason = r.reason;
  if (r.data !== null) e.data = JSON.parse(r.data) as Record<string, unknown>;
  return e;
}

/** What a watcher asks for: changes after a revision, optionally only some kinds or resources. */
export interface WatchFilter {
  kinds?: readonly string[] | undefined;
  resourcePrefix?: string | undefined;
  /** A blocked watcher's: the revision its call had read up to, so a catch-up wakes it only for later ones. */
  after?: number | undefined;
}

/** The earliest revision any of these watchers asked after: nothing at or before it wakes one. */
export function floorOf(watchers: readonly Waiter<WatchFilter, true>[]): number {
  return watchers.reduce((min, w) => Math.min(min, w.req.after ?? 0), Number.POSITIVE_INFINITY);
}

/** Whether a blocked watcher wants this change: after what it had read, and matching its filter. */
export function wants(w: WatchFilter, revision: number, kind: string, resource: string): boolean {
  return revision > (w.after ?? 0) && matches(w, kind, resource);
}

/** Kinds are exact (`lock.granted`) or prefixes ending in "." (`lock.`). */
export function matches(f: WatchFilter, kind: string, resource: string): boolean {
  if (f.kinds && f.kinds.length > 0 && !f.kinds.some((k) => kind === k || (k.endsWith(".") && kind.startsWith(k)))) return false;
  return !f.resourcePrefix || resource.startsWith(f.resourcePrefix);
}
