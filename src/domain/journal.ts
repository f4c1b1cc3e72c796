// The one record of changes. Every primitive that records what happened (pools now; locks,
// tasks and path claims use the same shape) writes an entry here inside the transaction that
// made the change, so the journal never shows a change that rolled back and never misses one
// that committed. Each entry gets a global revision that only grows (its rowid; trimming never
// removes the newest entry, so no revision is handed out twice); the change feed and the
// dashboard read from a revision onward. A pool grant's revision is also its fence.
import type { Ctx } from "./context.ts";

// A month of history is plenty to see what happened to a build slot or a claim; older entries
// are trimmed so a daemon that runs for a year does not grow its database without bound.
export const JOURNAL_RETENTION_MS = 30 * 24 * 3600 * 1000;
// Trimming is cheap but not free; once an hour keeps the table within an hour of the limit.
const TRIM_EVERY_MS = 3600 * 1000;

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

export interface RecordFields {
  agentId?: string | null | undefined;
  reason?: string | null | undefined;
  data?: Record<string, unknown> | undefined;
}

interface JournalRow {
  revision: number;
  at: number;
  kind: string;
  resource: string;
  agent_id: string | null;
  reason: string | null;
  data: string | null;
}

export class Journal {
  constructor(private readonly c: Ctx) {
    this.armTrim();
  }

  /** Records a change; call it inside the transaction that makes the change. */
  record(kind: string, resource: string, f: RecordFields = {}): number {
    const row = this.c.store
      .q<{ revision: number }>("INSERT INTO journal (at, kind, resource, agent_id, reason, data) VALUES (?, ?, ?, ?, ?, ?) RETURNING revision")
      .get(this.c.clock.now(), kind, resource, f.agentId ?? null, f.reason ?? null, f.data ? JSON.stringify(f.data) : null)!;
    return row.revision;
  }

  /** Entries after `revision`, oldest first; optionally only some kinds (prefixes like `pool.`) or resources. */
  since(revision: number, o: { limit?: number; kinds?: readonly string[]; resourcePrefix?: string } = {}): JournalEntry[] {
    const rows = this.c.store
      .q<JournalRow>("SELECT * FROM journal WHERE revision > ? ORDER BY revision LIMIT ?")
      .all(revision, o.kinds || o.resourcePrefix ? -1 : (o.limit ?? 1000));
    const kinds = o.kinds;
    const out: JournalEntry[] = [];
    for (const r of rows) {
      if (kinds && !kinds.some((k) => r.kind === k || (k.endsWith(".") && r.kind.startsWith(k)))) continue;
      if (o.resourcePrefix && !r.resource.startsWith(o.resourcePrefix)) continue;
      out.push(toEntry(r));
      if (out.length >= (o.limit ?? 1000)) break;
    }
    return out;
  }

  /** The newest revision recorded (0 when none). */
  revision(): number {
    return this.c.store.q<{ r: number | null }>("SELECT MAX(revision) AS r FROM journal").get()?.r ?? 0;
  }

  private armTrim(): void {
    this.c.scheduler.at("journal:trim", this.c.clock.now() + TRIM_EVERY_MS, () => {
      // The newest entry always stays: revisions are rowids, and max(rowid) + 1 must never fall
      // back to a revision that was handed out already.
      this.c.store
        .q("DELETE FROM journal WHERE at < ? AND revision < (SELECT MAX(revision) FROM journal)")
        .run(this.c.clock.now() - JOURNAL_RETENTION_MS);
      this.armTrim();
    });
  }
}

function toEntry(r: JournalRow): JournalEntry {
  const e: JournalEntry = { revision: r.revision, at: r.at, kind: r.kind, resource: r.resource };
  if (r.agent_id !== null) e.agentId = r.agent_id;
  if (r.reason !== null) e.reason = r.reason;
  if (r.data !== null) e.data = JSON.parse(r.data) as Record<string, unknown>;
  return e;
}
