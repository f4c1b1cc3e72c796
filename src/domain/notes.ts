// Shared notes (key → value) with optional expiry and compare-and-swap. An expired note is
// gone for every read at once; the scheduler deletes its row at the exact deadline.
// The journal gets each note's key and length, never its value: a note is another agent's
// data, and the feed is read by every agent and kept for a week.
// A note is one row that no daemon mirrors (its expiry timer is armed after the commit), so
// every call on one note is a row body (docs/cluster.md, "Scaling out"): on a shared store,
// calls on different notes overlap across daemons, and a compare-and-swap is one conditional
// statement, decided by the row's lock. Only list_notes, which reads every row, takes the
// global order.
import { all, get, type SQLQueryBindings, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";

export interface Note {
  key: string;
  value: string;
  author: string | null;
  updated_at: number;
  expires_at: number | null;
}

export class Notes {
  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {}

  /** Arms the expiry of the stored notes (createKernel runs every primitive's load). */
  *load(): Tx<void> {
    yield* this.armNext();
  }

  /** ttlMs ≤ 0 or absent: no expiry. */
  async set(key: string, value: string, author: string | undefined, ttlMs: number | undefined): Promise<void> {
    await this.c.rowTx("notes", key, () => this.write(key, value, author, ttlMs));
  }

  async get(key: string): Promise<Note | null> {
    return this.c.rowRead("notes", key, () => get<Note>("SELECT * FROM notes WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)", key, this.c.clock.now()));
  }

  async list(): Promise<Note[]> {
    // Rows only, a lapsed note left out by the statement: a read in the shared order.
    return this.c.rowRead("notes", "", () => all<Note>("SELECT * FROM notes WHERE expires_at IS NULL OR expires_at > ? ORDER BY key", this.c.clock.now()));
  }

  async delete(key: string): Promise<boolean> {
    return this.c.rowTx("notes", key, () => this.deleteTx(key));
  }

  /**
   * A live note's row deleted and recorded, as its body's last statement (docs/cluster.md, "A row
   * batch in one flight"). A lapsed note is not a live one: its row is left to the expiry, which
   * records it expired, as it does every note that lapses.
   */
  private *deleteTx(key: string): Tx<boolean> {
    const sql = "DELETE FROM notes WHERE key = ? AND (expires_at IS NULL OR expires_at > ?) RETURNING key";
    return (yield* this.journal.lastRecorded("note.deleted", key, { data: "NULL", args: [] }, {}, sql, key, this.c.clock.now())) !== null;
  }

  /** Sets newValue only if the current value equals expected; absent or expired compares as "". */
  async swap(key: string, expected: string, newValue: string, author: string | undefined, ttlMs: number | undefined): Promise<boolean> {
    return this.c.rowTx("notes", key, () => this.swapTx(key, expected, newValue, author, ttlMs));
  }

  /**
   * One conditional statement, never a read and then a write: two swaps of one key side by side
   * (other daemons' row bodies) are ordered by the row's lock, and the second is judged against
   * the value the first wrote (PostgreSQL rechecks the condition on the newest row).
   */
  private *swapTx(key: string, expected: string, newValue: string, author: string | undefined, ttlMs: number | undefined): Tx<boolean> {
    const now = this.c.clock.now();
    const expiresAt = expiryOf(now, ttlMs);
    const [sql, ...args]: [string, ...SQLQueryBindings[]] =
      expected === ""
        ? // Absent, expired or empty: each compares as "".
          [`${UPSERT} WHERE notes.value = '' OR notes.expires_at <= ?`, key, newValue, author ?? null, now, expiresAt, now]
        : [
            "UPDATE notes SET value = ?, author = ?, updated_at = ?, expires_at = ? WHERE key = ? AND value = ? AND (expires_at IS NULL OR expires_at > ?)",
            newValue,
            author ?? null,
            now,
            expiresAt,
            key,
            expected,
            now,
          ];
    return yield* this.lastWrite(key, newValue, author, expiresAt, sql, args);
  }

  /**
   * A note's write as its body's last statement, its journal entry going with it: a batch of
   * them commits in the flight that carries it (docs/cluster.md, "A row batch in one flight").
   * A note that expires moves the expiry's timer after the commit, to its deadline if that is
   * the earliest this daemon knows (no read: the timer only ever needs the earliest). Whether it
   * wrote (a swap may not: then nothing is recorded, no watcher woken, and no timer moved).
   */
  private *lastWrite(key: string, value: string, author: string | undefined, expiresAt: number | null, sql: string, args: SQLQueryBindings[]): Tx<boolean> {
    const entry = { data: "?", args: [JSON.stringify(setData(value, expiresAt))] };
    if ((yield* this.journal.lastRecorded("note.set", key, entry, { agentId: author }, `${sql} RETURNING key`, ...args)) === null) return false;
    if (expiresAt !== null) this.c.store.afterCommit(() => this.c.scheduler.atEarliest("notes:expiry", expiresAt, () => this.expire()));
    return true;
  }

  private *write(key: string, value: string, author: string | undefined, ttlMs: number | undefined): Tx<void> {
    const now = this.c.clock.now();
    const expiresAt = expiryOf(now, ttlMs);
    yield* this.lastWrite(key, value, author, expiresAt, UPSERT, [key, value, author ?? null, now, expiresAt]);
  }

  // One scheduler entry for all notes, at the earliest expiry: notes have no waiters, so the
  // deletion only reclaims space; reads already filter expired rows. Armed after the commit (a
  // row body changes nothing in memory before it, and may run again). On a shared store each
  // daemon arms it for the notes it has seen; a daemon that dies before firing is replaced by
  // the catch-up every other daemon makes when it notices (refresh runs this again).
  private *armNext(): Tx<void> {
    const at = (yield* get<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM notes"))?.at ?? null;
    this.c.store.afterCommit(() => {
      if (at === null) this.c.scheduler.cancel("notes:expiry");
      else this.c.scheduler.at("notes:expiry", at, () => this.expire());
    });
  }

  private *expire(): Tx<void> {
    const gone = yield* all<{ key: string }>("DELETE FROM notes WHERE expires_at <= ? RETURNING key", this.c.clock.now());
    for (const { key } of gone) yield* this.journal.record("note.expired", key);
    yield* this.armNext();
  }
}

/** A note.set entry's data: the value's length (never the value), and its expiry if it has one. */
function setData(value: string, expiresAt: number | null): Record<string, unknown> {
  return { length: value.length, ...(expiresAt !== null ? { expires_at: expiresAt } : {}) };
}

/** A note's expiry: ttlMs ≤ 0 or absent, none. */
function expiryOf(now: number, ttlMs: number | undefined): number | null {
  return ttlMs !== undefined && ttlMs > 0 ? now + ttlMs : null;
}

/** A note written whole: inserted, or every field of the row overwritten. */
const UPSERT =
  "INSERT INTO notes (key, value, author, updated_at, expires_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET " +
  "value = excluded.value, author = excluded.author, updated_at = excluded.updated_at, expires_at = excluded.expires_at";
