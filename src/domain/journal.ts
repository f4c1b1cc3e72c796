// The one record of changes. Every primitive (locks, tasks, presence, notes, counters, events,
// pools, path claims) writes an entry here inside the transaction that made the change, so the
// journal never shows a change that rolled back and never misses one that committed. Each entry gets a global revision that only grows (its rowid; trimming never
// removes the newest entry, so no revision is handed out twice); the change feed and the
// dashboard read from a revision onward. A pool grant's revision is also its fence.
import { andThen, type Awaitable, detached } from "../store/store.ts";
import { createLog } from "../log.ts";
import { AirlockError } from "../errors.ts";
import { all, get, last, run, runLater, type SQLQueryBindings, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import { type DataFromRow, entryArgs, entryFromRow, INSERT_ENTRY, type RecordFields } from "./journal-entry.ts";
import { floorOf, type JournalEntry, type JournalRow, matches, readAfter, runAfter, type SinceOptions, toEntry, type WatchFilter, wants } from "./journal-read.ts";
import type { WaitQueue } from "./wait.ts";
import type { Waiter } from "./waiter.ts";

// A week of history is enough to see what happened to a lock, a slot or a claim; 100,000
// entries bound a busy daemon's table (a few tens of MB) however fast it writes. Whichever
// trims more wins. AIRLOCK_JOURNAL_DAYS / AIRLOCK_JOURNAL_MAX change them.
export const JOURNAL_DAYS = 7;
export const JOURNAL_MAX = 100_000;
// Trimming is cheap but not free; once an hour keeps the table within an hour of the age limit.
const TRIM_EVERY_MS = 3600 * 1000;
// Between hourly trims, every this many inserts the count is checked (two rowid look-ups, not
// a scan), and trimmed once it passes the max by a tenth: never a scan per write.
const COUNT_CHECK_EVERY = 256;
/** The most rows a shared check for watchers reads (Journal.wanted); more, and the catch-up reads them. */
const WANTED_READ = 1000;
/**
 * A look in the shared order cut before what it wants, by a revision missing (a writer still in
 * flight, most often, whose commit is a few ms away; or a rollback's gap for good), looks again
 * after each of these pauses before it reads in the exclusive order, which waits for every
 * writer and stops every daemon's row bodies meanwhile (docs/cluster.md, "A look cut at a gap").
 */
const LOOK_AGAIN_MS = [1, 3, 10, 25] as const;
/**
 * How long the status snapshot's journal tail may stay cut at one missing revision before the
 * exclusive order reads it (settledTail): a writer in flight commits within a few ms; a
 * rollback's gap stays.
 */
const GAP_PATIENCE_MS = 50;
const COUNT_SLACK = 1.1;
const log = createLog("journal");
// What newToken() makes (16 random bytes in hex): nothing else can name a token in the journal.
const TOKEN_SHAPE = /^[0-9a-f]{32}$/;

export interface JournalOptions {
  /** Entries older than this are trimmed (the newest always stays). */
  retentionMs?: number;
  /** At most about this many entries are kept (the newest always stays). */
  maxEntries?: number;
  /**
   * Bench/diagnostic only (AIRLOCK_JOURNAL=off): record nothing but pool.* and path.*, whose
   * revisions are fences; the other kinds return 0 without an insert.
   */
  benchOff?: boolean;
}

export interface WatchResult {
  /** Pass it back as the next call's since_revision. */
  revision: number;
  changes: JournalEntry[];
  /** since_revision was older than the oldest entry kept: changes in between were trimmed. */
  trimmed?: true;
}

export type { JournalEntry, WatchFilter } from "./journal-read.ts";
export type { DataFromRow, RecordFields } from "./journal-entry.ts";

export class Journal {
  /** watch_changes calls blocked until a matching change commits; no wake_token, they call again. */
  readonly waits: WaitQueue<WatchFilter, true>;
  private readonly retentionMs: number;
  private readonly maxEntries: number;
  private sinceCountCheck = 0;
  /** The newest revision this daemon's watchers have been shown (a shared store: others record too). */
  private seen = 0;
  /**
   * A shared store: every revision up to this one committed, and `wanted` woke the watchers here
   * that any of them matched (a watcher that came later reads them in its own look, taken after
   * its place: watchShared).
   */
  private checkedUpTo = 0;
  /**
   * A shared store: every revision up to this one committed or gone for good, as the status
   * snapshot found (settledTail, settledUpTo). Apart from `checkedUpTo`, which also says the
   * watchers were woken for what it passed.
   */
  private settledTo = 0;
  /** The revision a settled tail was last cut at (settledTail), and since when it has been missing. */
  private missing: { revision: number; since: number } | null = null;
  private readonly benchOff: boolean;

  constructor(
    private readonly c: Ctx,
    o: JournalOptions = {},
  ) {
    this.retentionMs = o.retentionMs ?? JOURNAL_DAYS * 24 * 3600 * 1000;
    this.maxEntries = Math.max(1, o.maxEntries ?? JOURNAL_MAX);
    this.benchOff = o.benchOff === true;
    // Quiet: watchers are not what the dashboard shows. Local: on a shared store a watcher's
    // place is not stored, so a long poll takes no exclusive turn (docs/cluster.md, "Watchers
    // off the stored lines").
    this.waits = c.waitQueue("journal", 0, {}, { quiet: true, local: true });
    this.armTrim();
  }

  /**
   * Records a change; call it inside the transaction that makes the change. Watchers whose
   * filter matches are granted here and answered after that transaction commits (the wait
   * queue's rule), so a watcher never sees a change that rolled back. The entry is a held write
   * (runLater): on PostgreSQL it goes ahead of the transaction's next statement or with its
   * COMMIT, never a round trip of its own, and a batch's entries sent together are one INSERT
   * (docs/cluster.md, "Scaling out"); so its revision is not known here (recordFence knows it).
   */
  record(kind: string, resource: string, f: RecordFields = {}): Tx<void> {
    return this.write(kind, resource, f, false) as Tx<unknown> as Tx<void>; // no generator more per entry
  }

  /** Records a change at once and answers its revision (a pool grant's fence); not in a batch of row bodies. */
  recordFence(kind: string, resource: string, f: RecordFields = {}): Tx<number> {
    return this.write(kind, resource, f, true);
  }

  /**
   * A body's last statement (last()) with the entry of its change going with it, its data (and
   * its resource or agent, when `from` names their columns) from the row the statement returns
   * (a counter's value, a renewed lock's holder): the row, or null. The entry is counted before
   * the write (a row batch checks the count after its commit); the watchers the change matches
   * are woken only when the statement returned its row (a swap that wrote nothing, a counter the
   * schema refused: none).
   */
  *lastRecorded<R>(kind: string, resource: string, from: DataFromRow, f: Omit<RecordFields, "data">, sql: string, ...args: SQLQueryBindings[]): Tx<R | null> {
    if (this.off(kind)) return yield* last<R>(from.with ?? [], sql, ...args);
    yield* this.counted(0);
    const row = yield* last<R>([...(from.with ?? []), entryFromRow(this.c.clock.now(), kind, resource, f, from)], sql, ...args);
    if (row) this.heard(kind, from.resource === undefined ? resource : String((row as Record<string, unknown>)[from.resource]));
    return row;
  }

  private off(kind: string): boolean {
    return this.benchOff && !kind.startsWith("pool.") && !kind.startsWith("path.");
  }

  private *write(kind: string, resource: string, f: RecordFields, fence: boolean): Tx<number> {
    if (this.c.inSharedOrder() && fence) throw new AirlockError("internal", `a fence (${kind}) asked of a batch of row bodies`);
    if (this.off(kind)) return 0;
    const args = entryArgs(this.c.clock.now(), kind, resource, f);
    // run() and its lastInsertRowid, not RETURNING: the rowid SQLite assigns is the revision,
    // and a RETURNING row costs about 0.8 µs more per insert (a result row built and read).
    let revision = 0;
    if (fence) revision = Number((yield* run(INSERT_ENTRY, ...args)).lastInsertRowid);
    else yield* runLater(INSERT_ENTRY, ...args);
    this.heard(kind, resource);
    yield* this.counted(revision);
    return revision;
  }

  /** The watchers an entry recorded in this transaction matches: woken once it commits. */
  private heard(kind: string, resource: string): void {
    if (this.c.inSharedOrder()) {
      // A batch of row bodies leaves the lines alone, and other daemons' row bodies may hold
      // smaller revisions not committed yet: the watchers here that the change matches are woken
      // after its commit, and each looks for itself, its look cut at any revision still in flight
      // (watchShared). Its revision is later than any a watcher here was shown: a match is enough.
      const woken = this.watchers().filter((w) => matches(w.req, kind, resource));
      if (woken.length > 0) this.c.store.afterCommit(() => this.wake(woken));
    } else {
      const line = this.waits.line("journal"); // copied below: a grant takes its waiter out of it
      if (line.length > 0) for (const w of [...line]) if (matches(w.req, kind, resource)) this.waits.grant(w, true);
    }
  }

  /** An entry recorded (its revision, when known): every COUNT_CHECK_EVERY, is the journal past its bound? */
  private *counted(revision: number): Tx<void> {
    const shared = this.c.inSharedOrder();
    if (++this.sinceCountCheck >= COUNT_CHECK_EVERY) {
      this.sinceCountCheck = 0;
      // In a row batch a trim could wait for another daemon's trim while that one waits for a row
      // this batch holds, and even the check's reads would send the body's write behind those of
      // the bodies after it (two daemons' batches could lock rows in opposite orders: PostgreSQL
      // ends one). So it reads after the commit, in the shared order, and a trim that is due runs
      // in a transaction of its own (the scheduler's, in the global order).
      if (!shared) return yield* this.trimByCount(revision || null, COUNT_SLACK);
      const trim = () => this.c.scheduler.at("journal:count", this.c.clock.now(), () => this.trimByCount(null, COUNT_SLACK));
      const due = () => andThen(this.c.rowRead("journal", "", () => this.overCount(null, COUNT_SLACK)), (over) => (over ? trim() : undefined));
      this.c.store.afterCommit(() => detached(due, (err) => log.error("the journal's count check failed (the hourly trim still runs):", err)));
    }
  }

  /** At start: where this daemon's watchers begin. */
  *load(): Tx<void> {
    this.seen = yield* this.revisionTx();
  }

  /**
   * Other daemons recorded changes (a shared store), or row bodies did: watchers here whose
   * filter matches one after what they had read are woken, exactly as if it had been recorded
   * here. `seen` moves only here (and at load), in a transaction of the global order, where no
   * row body is in flight: a revision recorded here meanwhile does not move it past one that
   * another daemon's row body committed and nobody here has looked at yet.
   */
  *catchUp(head?: number): Tx<void> {
    const line = this.waits.line("journal");
    if (line.length === 0) {
      // `head`: the newest revision, read when this transaction took the order (nothing else
      // in flight then could hold one), so no read of its own.
      this.seen = head ?? (yield* this.revisionTx());
      return;
    }
    // Nothing at or before the earliest revision a watcher here asked after can wake one (a
    // watcher that comes later looks at it for itself): a daemon whose `seen` lags far behind
    // (no transaction here in the global order for a while) does not read it all here.
    for (const r of yield* all<{ revision: number; kind: string; resource: string }>(
      "SELECT revision, kind, resource FROM journal WHERE revision > ? ORDER BY revision",
      Math.max(this.seen, floorOf(line)),
    )) {
      for (const w of [...line]) if (wants(w.req, r.revision, r.kind, r.resource)) this.waits.grant(w, true);
      this.seen = r.revision;
    }
  }

  /**
   * In the shared order (a shared store's status snapshot): the newest `n` entries up to the
   * last revision before which no writer in flight may still hold one, and that revision
   * (docs/cluster.md, "The status snapshot beside row bodies"). Everything up to `seen` (read in
   * the exclusive order), `checkedUpTo` or `settledTo` committed; from there the run of
   * revisions is followed to its first missing one, and what it passed is settled. Null where the
   * exclusive order must read it: the run is longer than WANTED_READ (this daemon has not been
   * in the global order for a while), or the same revision has stayed missing past
   * GAP_PATIENCE_MS, a rollback's gap for good most likely, which that order passes.
   */
  *settledTail(n: number): Tx<{ entries: JournalEntry[]; revision: number } | null> {
    const run = yield* runAfter(Math.max(this.seen, this.checkedUpTo, this.settledTo), WANTED_READ);
    if (!run) return null;
    const upTo = run.end;
    this.settledTo = upTo;
    if (upTo < run.newest) {
      // Cut: upTo + 1 is missing and a later revision is there.
      const now = this.c.clock.now();
      if (this.missing?.revision !== upTo + 1) this.missing = { revision: upTo + 1, since: now };
      else if (now - this.missing.since >= GAP_PATIENCE_MS) return null;
    } else this.missing = null;
    const rows = yield* all<JournalRow>("SELECT * FROM (SELECT * FROM journal WHERE revision <= ? ORDER BY revision DESC LIMIT ?) AS tail ORDER BY revision", upTo, n);
    return { entries: rows.map(toEntry), revision: upTo };
  }

  /** In the exclusive order, where no writer is in flight: every revision up to `revision` is settled. */
  settledUpTo(revision: number): void {
    this.settledTo = Math.max(this.settledTo, revision);
    if (this.missing && this.missing.revision <= revision) this.missing = null;
  }

  /** Whether a call here is blocked watching the change feed. */
  watching(): boolean {
    return this.watchers().length > 0;
  }

  /**
   * The calls watching the change feed here: on a shared store every place in the local line
   * (blocked, or about to block once its look is done: watchShared); on SQLite the blocked ones.
   */
  private watchers(): readonly Waiter<WatchFilter, true>[] {
    const line = this.waits.line("journal");
    return this.waits.local ? line : line.filter((w) => w.attached);
  }

  /**
   * A shared store, in the shared order (docs/cluster.md, "Watchers beside row bodies",
   * "Watchers off the stored lines"): the watchers here that a change recorded after what they
   * were last shown matches are woken once the read commits, each to look for itself. Another
   * daemon's commit, a row batch or a line body, says it recorded changes, and this read stops no
   * daemon's row bodies; a catch-up in the exclusive order would stop them all. A revision in
   * flight (taken, not committed) is not seen: its commit says so again, and it is read then.
   * What it read up to its first missing revision is not read again (`checkedUpTo`). Far behind
   * (WANTED_READ rows or more), true: it leaves the reading to a catch-up, which passes a gap
   * that is final, and moves `seen`.
   */
  *wanted(): Tx<boolean> {
    const watchers = this.watchers();
    if (watchers.length === 0) return false;
    const checked = Math.max(this.seen, this.checkedUpTo);
    // From the earliest revision a watcher here asked after, when that is later (catchUp): a
    // run read from there says nothing of what is before it, which a writer may still hold.
    const from = Math.max(checked, floorOf(watchers));
    const rows = yield* all<{ revision: number; kind: string; resource: string }>(
      "SELECT revision, kind, resource FROM journal WHERE revision > ? ORDER BY revision LIMIT ?",
      from,
      WANTED_READ,
    );
    if (rows.length >= WANTED_READ) return true;
    let upTo = from;
    let contiguous = true;
    const woken = new Set<Waiter<WatchFilter, true>>();
    for (const r of rows) {
      if (contiguous && r.revision === upTo + 1) upTo = r.revision;
      else contiguous = false;
      for (const w of watchers) if (wants(w.req, r.revision, r.kind, r.resource)) woken.add(w);
    }
    if (from === checked) this.checkedUpTo = upTo;
    if (woken.size > 0) this.c.store.afterCommit(() => this.wake(woken));
    return false;
  }

  /**
   * Wakes watchers still in line, outside any transaction (a shared store): each looks for
   * itself, and a look cut before its change reads exactly (watchShared).
   */
  private wake(watchers: Iterable<Waiter<WatchFilter, true>>): void {
    for (const w of watchers) if (this.waits.get(w.token) === w) this.waits.grant(w, true);
  }

  /**
   * watch_changes: the matching changes after `since` at once, or else blocks up to waitMs until
   * one commits. The check and the enqueue happen in one transaction, so a change committed
   * between two calls is always returned by the second. On a shared store (`watchShared`) the
   * watcher's place is this daemon's memory, and the look is in the shared order.
   */
  async watch(since: number, waitMs: number, filter: WatchFilter, limit: number, signal?: AbortSignal): Promise<WatchResult> {
    if (this.c.rowsOverlap) return this.watchShared(since, waitMs, filter, limit, signal);
    const self = this;
    const first = await this.c.tx(function* () {
      const r = yield* self.changes(since, filter, limit);
      if (r.changes.length > 0 || waitMs <= 0) return r;
      return { blocked: self.waits.block(self.waits.enqueue("journal", { ...filter, after: r.revision }), self.c.clock.now() + waitMs, signal) };
    });
    if ("changes" in first) return first;
    await first.blocked;
    return this.c.read(() => this.changes(since, filter, limit));
  }

  /**
   * watch_changes on a shared store (docs/cluster.md, "Watchers off the stored lines"): no
   * exclusive turn unless a gap is met. A watch that may wait takes its place in this daemon's
   * line first (memory only: the line is local) and then looks, in the shared order; what
   * commits after the look is read by the check a commit's word starts (`wanted`, which wakes
   * it), and what committed before, by the look. A place taken out by a wake-up between the
   * look and the block means the look may have missed its change: it looks again.
   */
  private async watchShared(since: number, waitMs: number, filter: WatchFilter, limit: number, signal?: AbortSignal): Promise<WatchResult> {
    const now = (woken = false) => this.settled(since, filter, limit, woken);
    if (waitMs <= 0) return now();
    const deadline = this.c.clock.now() + waitMs;
    const w = this.waits.enqueue("journal", { ...filter, after: since });
    let seen: WatchResult;
    try {
      // Heard from here on: whatever commits after the look wakes it (only daemons with a
      // watcher hear the journal's channel: docs/cluster.md, "Who hears a NOTIFY").
      await this.c.store.shared?.hearJournal();
      seen = await now();
    } catch (err) {
      this.waits.remove(w);
      throw err;
    }
    if (seen.changes.length > 0 || signal?.aborted) {
      this.waits.remove(w);
      return seen;
    }
    if (this.waits.get(w.token) !== w) return now(true); // woken while it looked
    const outcome = await this.waits.block(w, deadline, signal);
    // Not woken (the wait ended): the look's answer stands, even with nothing in it (a long
    // poll's end must not stop every daemon's row bodies for an exclusive read).
    return now(outcome.kind === "granted");
  }

  /**
   * The changes after `since`, from a look in the shared order that is not cut before what it
   * wants: anything (null is a look cut before any match), or, `woken` (a matching change
   * committed), a change: a look cut before it would answer nothing, a wake-up for nothing. A
   * cut look looks again after short pauses (LOOK_AGAIN_MS: the writer in flight commits), and
   * then reads exactly, in the exclusive order, which passes a gap for good. A look from 0 (a
   * first call) cut at once is a journal whose oldest entries were trimmed: no pause helps it.
   */
  private async settled(since: number, filter: WatchFilter, limit: number, woken: boolean): Promise<WatchResult> {
    for (let i = 0; ; i++) {
      const r = await this.look(since, filter, limit);
      if (r && (r.changes.length > 0 || !woken)) return r;
      const pause = since > 0 ? LOOK_AGAIN_MS[i] : undefined;
      if (pause === undefined) return this.c.read(() => this.changes(since, filter, limit));
      await new Promise<void>((resolve) => this.c.clock.setTimer(resolve, pause));
    }
  }

  /** On a shared store: the changes after `since` as a row body sees them (shared). */
  private look(since: number, filter: WatchFilter, limit: number): Awaitable<WatchResult | null> {
    return this.c.rowRead("journal", "", () => this.shared(since, filter, limit));
  }

  /**
   * The changes after `since`, read in the shared order (docs/cluster.md, "Row bodies in the
   * shared order", the journal): other daemons' row bodies may be in flight, each holding revisions it
   * took from the sequence, so 12 may be visible while 11 is not yet. What is read is cut at the
   * first revision missing after `since`: every revision up to the cut is committed, so no
   * reader ever sees 12 before 11, and the revision answered is never past a missing one. Null
   * when the cut left nothing that matches (a writer in flight, or a transaction that rolled
   * back and left a gap for good, before what was looked for): then the caller reads in the
   * exclusive order, which waits for every writer in flight and passes a gap that is final. So a
   * gap for good costs one exclusive read of each reader that meets it, never an answer that
   * stays behind it.
   */
  private *shared(since: number, filter: WatchFilter, limit: number): Tx<WatchResult | null> {
    const read = yield* readAfter(since, { ...filter, limit }, true);
    if (read.cut && read.entries.length === 0) return null;
    return yield* this.result(since, read.entries, read.upTo);
  }

  private *changes(since: number, filter: WatchFilter, limit: number): Tx<WatchResult> {
    const read = yield* readAfter(since, { ...filter, limit }, false);
    return yield* this.result(since, read.entries, read.entries.length > 0 ? read.upTo : yield* this.revisionTx());
  }

  /** The answer of a watch: with nothing that matched, `newest` (a filtered watcher skips what it has seen). */
  private *result(since: number, changes: JournalEntry[], newest: number): Tx<WatchResult> {
    const revision = changes.length > 0 ? changes[changes.length - 1]!.revision : Math.max(since, newest);
    const r: WatchResult = { revision, changes };
    if (since > 0 && since < (yield* this.oldestTx()) - 1) r.trimmed = true;
    return r;
  }

  /**
   * Whether a change of this kind prefix (`pool.`, `path.`) names this token by the 8-character
   * prefix the journal keeps of it: then it was issued here (within the journal's retention),
   * and a release that finds nothing means "already released", not "unknown". Read only on
   * that miss, never on a path every call takes.
   */
  async mentionsToken(kindPrefix: string, token: string): Promise<boolean> {
    if (!TOKEN_SHAPE.test(token)) return false;
    return this.c.read(function* () {
      const row = yield* get<{ x: number }>("SELECT 1 AS x FROM journal WHERE kind LIKE ? AND data LIKE ? LIMIT 1", `${kindPrefix}%`, `%"${token.slice(0, 8)}"%`);
      return row !== undefined && row !== null;
    });
  }

  /**
   * Whether any change kept names this agent (the messages' "seen", asked last: it reads the
   * journal without an index, and only when nothing else knows the agent, a typo's cost).
   */
  *mentionsAgentTx(agentId: string): Tx<boolean> {
    return (yield* get("SELECT 1 AS x FROM journal WHERE agent_id = ? LIMIT 1", agentId)) !== null;
  }

  /** The oldest revision kept (0 when none). Revisions are contiguous but for trimming. */
  async oldest(): Promise<number> {
    return this.c.read(() => this.oldestTx());
  }

  *oldestTx(): Tx<number> {
    return (yield* get<{ r: number | null }>("SELECT MIN(revision) AS r FROM journal"))?.r ?? 0;
  }

  /** Entries after `revision`, oldest first; optionally only some kinds (prefixes like `pool.`) or resources. */
  async since(revision: number, o: SinceOptions = {}): Promise<JournalEntry[]> {
    return this.c.read(() => this.sinceTx(revision, o));
  }

  *sinceTx(revision: number, o: SinceOptions = {}): Tx<JournalEntry[]> {
    return (yield* readAfter(revision, o, false)).entries;
  }

  /** The newest revision recorded (0 when none). */
  async revision(): Promise<number> {
    return this.c.read(() => this.revisionTx());
  }

  *revisionTx(): Tx<number> {
    return (yield* get<{ r: number | null }>("SELECT MAX(revision) AS r FROM journal"))?.r ?? 0;
  }

  /** Trims by age and by count; the hourly timer runs it (tests call it directly). */
  async trim(): Promise<void> {
    await this.c.tx(() => this.trimTx());
  }

  private *trimTx(): Tx<void> {
    // The newest entry always stays: revisions are rowids, and max(rowid) + 1 must never fall
    // back to a revision that was handed out already.
    yield* run("DELETE FROM journal WHERE at < ? AND revision < (SELECT MAX(revision) FROM journal)", this.c.clock.now() - this.retentionMs);
    yield* this.trimByCount(yield* this.revisionTx(), 1);
  }

  /** Keeps the newest maxEntries once there are more than maxEntries × slack (contiguous revisions). */
  private *trimByCount(given: number | null, slack: number): Tx<void> {
    const newest = given ?? (yield* this.revisionTx()); // null: scheduled, the newest by then
    if (yield* this.overCount(newest, slack)) yield* run("DELETE FROM journal WHERE revision <= ?", newest - this.maxEntries);
  }

  /** Whether more than maxEntries × slack entries are kept, up to `newest` (contiguous revisions; null: the newest now). */
  private *overCount(given: number | null, slack: number): Tx<boolean> {
    const newest = given ?? (yield* this.revisionTx());
    return newest - (yield* this.oldestTx()) + 1 > this.maxEntries * slack;
  }

  private armTrim(): void {
    this.c.scheduler.at("journal:trim", this.c.clock.now() + TRIM_EVERY_MS, () => this.trimAndRearm());
  }

  private *trimAndRearm(): Tx<void> {
    yield* this.trimTx();
    this.armTrim();
  }
}
