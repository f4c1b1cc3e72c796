// Shared notes (key → value) with optional expiry and compare-and-swap. An expired note is
// gone for every read at once; the scheduler deletes its row at the exact deadline.
// The journal gets each note's key and length, never its value: a note is another agent's
// data, and the feed is read by every agent and kept for a week.
import { all, get, run, type Tx } from "../store/tx.ts";
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
    await this.c.tx(() => this.write(key, value, author, ttlMs));
  }

  async get(key: string): Promise<Note | null> {
    return this.c.read(() => get<Note>("SELECT * FROM notes WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)", key, this.c.clock.now()));
  }

  async list(): Promise<Note[]> {
    return this.c.read(() => all<Note>("SELECT * FROM notes WHERE expires_at IS NULL OR expires_at > ? ORDER BY key", this.c.clock.now()));
  }

  async delete(key: string): Promise<boolean> {
    return this.c.tx(() => this.deleteTx(key));
  }

  private *deleteTx(key: string): Tx<boolean> {
    const live = yield* get<{ key: string; expires_at: number | null }>("DELETE FROM notes WHERE key = ? RETURNING key, expires_at", key);
    const wasLive = live !== null && (live.expires_at === null || live.expires_at > this.c.clock.now());
    if (wasLive) yield* this.journal.record("note.deleted", key);
    return wasLive;
  }

  /** Sets newValue only if the current value equals expected; absent or expired compares as "". */
  async swap(key: string, expected: string, newValue: string, author: string | undefined, ttlMs: number | undefined): Promise<boolean> {
    return this.c.tx(() => this.swapTx(key, expected, newValue, author, ttlMs));
  }

  private *swapTx(key: string, expected: string, newValue: string, author: string | undefined, ttlMs: number | undefined): Tx<boolean> {
    const cur = yield* get<{ value: string }>("SELECT value FROM notes WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)", key, this.c.clock.now());
    if ((cur?.value ?? "") !== expected) return false;
    yield* this.write(key, newValue, author, ttlMs);
    return true;
  }

  private *write(key: string, value: string, author: string | undefined, ttlMs: number | undefined): Tx<void> {
    const now = this.c.clock.now();
    const expiresAt = ttlMs !== undefined && ttlMs > 0 ? now + ttlMs : null;
    yield* run(
      "INSERT INTO notes (key, value, author, updated_at, expires_at) VALUES (?, ?, ?, ?, ?) " +
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, author = excluded.author, " +
        "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
      key,
      value,
      author ?? null,
      now,
      expiresAt,
    );
    yield* this.journal.record("note.set", key, { agentId: author, data: { length: value.length, ...(expiresAt !== null ? { expires_at: expiresAt } : {}) } });
    if (expiresAt !== null) yield* this.armNext();
  }

  // One scheduler entry for all notes, at the earliest expiry: notes have no waiters, so the
  // deletion only reclaims space; reads already filter expired rows.
  private *armNext(): Tx<void> {
    const row = yield* get<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM notes");
    if (row?.at == null) return this.c.scheduler.cancel("notes:expiry");
    this.c.scheduler.at("notes:expiry", row.at, () => this.expire());
  }

  private *expire(): Tx<void> {
    const gone = yield* all<{ key: string }>("DELETE FROM notes WHERE expires_at <= ? RETURNING key", this.c.clock.now());
    for (const { key } of gone) yield* this.journal.record("note.expired", key);
    yield* this.armNext();
  }
}
