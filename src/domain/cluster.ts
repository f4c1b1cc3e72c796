// Several daemons on one shared store (docs/cluster.md). The store runs every transaction of
// every daemon in one global order (an advisory lock), so the rows need nothing more: one
// holder per lock, distinct counters, one claimer per task, shared capacity and overlap hold
// as they do on one daemon. What each daemon keeps in memory needs this module:
// - the waiter lines: kept in the table `waiters` (src/domain/lines.ts, the one stored form
//   SQLite uses too), every daemon's waiters in one order. Each transaction that another daemon
//   committed since this one last looked starts with a catch-up that brings them up to the rows
//   (catchUp: only the places that changed, when that is known), and each transaction ends by
//   writing down what changed here (flush). So a freeing
//   transaction on any daemon sees the earliest attached waiter wherever it is, and the same
//   policies (FIFO, reservations, offers, pauses) apply across daemons;
// - a grant to another daemon's waiter: written into `grants` (flush), and the store's NOTIFY
//   wakes that daemon, whose catch-up answers the blocked call, or hands the grant back if the
//   call's client is gone (the waiter mechanism's rule, unchanged);
// - caches and timers (pool rows, the path index, expiry timers): refreshed by the catch-up
//   from the rows, so an expiry fires on whichever daemon gets there first and finds the row
//   still due (every expiry handler checks the row, so a second one does nothing);
// - daemons: each heartbeats its row in `daemons` (the store does it). The waiters of a daemon
//   silent for DEAD_AFTER_MS count as detached (never granted; they keep their place), and a
//   grant it never answered is handed back. Once its row is gone (it stopped, or was dead for
//   FORGET_AFTER_MS) its waiters stay in line, detached, with their grace (lines.ts): its
//   agents resume them on any daemon, and the first daemon there when a grace ends expires it.
import { type ClusterHooks, DEAD_AFTER_MS, type RowVersions } from "../store/store.ts";
import { all, gather, get, reading, run, type Stmt, type Tx } from "../store/tx.ts";
import { standing, standingAnswer, standingRead } from "./cluster-sync.ts";
import type { Journal } from "./journal.ts";
import type { Horizon, Primitive } from "./primitive.ts";
import { fromRow, type Lines, type WaiterRow } from "./lines.ts";
import type { WaitQueue } from "./wait.ts";
import type { Waiter } from "./waiter.ts";

/** A dead daemon's row is forgotten after this (its waiters' graces start then). */
export const FORGET_AFTER_MS = 120_000;

// The database's clock, in the milliseconds the heartbeats are written in: daemons on
// machines whose clocks disagree still agree on who is alive.
const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
/** A catch-up of the lines reads every daemon first (catchUpLines), and the grants: readAhead sends them ahead. */
const DAEMONS_READ = [`SELECT id, seen_at >= ${DB_NOW} - ? AS live, seen_at < ${DB_NOW} - ? AS lost FROM daemons`, DEAD_AFTER_MS, FORGET_AFTER_MS] as const;
const GRANTS_READ = "SELECT * FROM grants";

interface GrantRow {
  token: string;
  daemon: string;
  queue: string;
  waiter: string;
  value: string;
}

/** The tables whose change since a daemon's memory was current may leave its lines behind the stored ones. */
const LINE_TABLES = ["waiters", "grants", "daemons"] as const;

/**
 * A primitive's part in a catch-up: the tables it reads, and either its refresh by row version
 * (and the reads a BEGIN may send ahead of it) or its delta by horizon (Primitive.horizon).
 */
type Refresher = Pick<Primitive, "tables" | "refresh" | "reads" | "horizon">;

type AnyQueue = WaitQueue<unknown, unknown>;
type AnyWaiter = Waiter<unknown, unknown>;

/** What every transaction on the shared store does besides its body (the store runs it: ClusterHooks). */
export class Cluster implements ClusterHooks {
  /** Grants to other daemons' waiters made by the running transaction, for flush. */
  private grants: GrantRow[] = [];
  /** The daemons the last flush wrote grants to (concernedDaemons). */
  private grantedTo: ReadonlySet<string> = new Set();
  /**
   * For the lines and each refresh, the row version read at the catch-up that last ran it:
   * every change up to it is applied there (none: not known, read whole). For a mirror by
   * horizon, the horizon its last delta reached.
   */
  private readonly applied = new Map<object, number>();
  /** The version up to which freshen brought the mirrors it serves (-1: not since memory was last in doubt). */
  private freshAt = -1;
  /** The version this daemon's memory was current at, after its last transaction in the global order (-1: unknown). */
  seen: () => number = () => -1;
  /** The daemons' liveness moved since then (VersionSync): the lines are to be judged again. */
  livenessMoved: () => boolean = () => false;

  constructor(
    private readonly me: string,
    private readonly queues: ReadonlyMap<string, AnyQueue>,
    private readonly lines: Lines,
    private readonly journal: Journal,
    /**
     * Each primitive's refresh (drop caches, re-arm timers from the rows), and the tables it
     * reads. `since`: the row version up to which it has applied every change, when a delta will
     * do (docs/cluster.md, "Catch-up by deltas"); null: read the tables whole.
     */
    private readonly refreshers: readonly Refresher[],
  ) {
    for (const q of queues.values()) {
      q.onForeignGrant = (w, value) => {
        this.grants.push({ token: w.token, daemon: w.daemon!, queue: q.name, waiter: JSON.stringify(this.lines.rowOf(q, w)), value: encodeValue(q, value) });
      };
    }
  }

  /**
   * Another daemon committed since this one last looked: bring memory up to the rows. `changed`
   * names the tables those transactions wrote (null: unknown, so everything is reread); only
   * what they touched is reread.
   */
  *catchUp(changed: ReadonlySet<string> | null, rows?: RowVersions): Tx<void> {
    const { touched, lines, grants } = catchingUp(changed);
    // A catch-up holds the order exclusively, so no transaction that stamps rows is in flight
    // when it reads the row version: every write after it, of any daemon, a row body's too, is
    // stamped above it. So the rows above the version read when a reader (the lines, a refresh)
    // last ran are all it needs; unless that is not known, or the keys of deleted rows were
    // trimmed past it.
    const since = (reader: object) => (changed !== null && rows ? this.deltaFrom(reader, rows) : null);
    const ran = (reader: object) => void (rows ? this.applied.set(reader, rows.ver) : this.applied.delete(reader));
    if (lines || grants) yield* this.catchUpLines(lines, grants, since(this.lines));
    if (lines) ran(this.lines);
    for (const r of this.refreshers) {
      if (!touched(...r.tables)) continue;
      // By horizon: from where its last delta reached (no row version bounds it).
      if (r.horizon) yield* this.byHorizon(r, r.horizon, changed !== null && rows ? this.horizonFrom(r, rows) : null);
      else {
        yield* r.refresh!(since(r));
        ran(r);
      }
    }
    if (touched("journal")) yield* this.journal.catchUp(rows?.head);
  }

  /** Where a mirror's delta by horizon starts: where its last reached, unless that is not known or deleted keys were trimmed past it (null: whole). */
  private horizonFrom(reader: object, rows: RowVersions): number | null {
    const applied = this.applied.get(reader);
    return applied !== undefined && applied > rows.xfloor ? applied : null;
  }

  /** A mirror's delta by horizon (Primitive.horizon), read from `since` (or answered already) and applied; it stands at the new horizon. */
  private *byHorizon(r: Refresher, h: Horizon, since: number | null, answers?: readonly unknown[]): Tx<void> {
    this.applied.set(r, yield* h.apply(answers ?? (yield* gather(...h.reads(since))), since));
  }

  /**
   * What a catch-up of `tables` would read first, for a BEGIN to send ahead: each refresh's
   * delta from where it stands (Primitive.reads), for those that read one and know where they
   * stand. Sent after the order's lock, these are the rows the catch-up reads then, unless the
   * transaction wrote meanwhile or the refresh starts elsewhere (then it reads in turn).
   */
  readAhead(tables: ReadonlySet<string>): Stmt[] {
    const { touched, lines, grants } = catchingUp(tables);
    const since = this.applied.get(this.lines);
    return [
      // What catchUpLines reads, in its order: the daemons, the grants, the lines' delta.
      ...(lines || grants ? [reading.all(...DAEMONS_READ)] : []),
      ...(grants ? [reading.all(GRANTS_READ)] : []),
      ...(lines && since !== undefined ? this.lines.reads(since) : []),
      ...this.refreshers.flatMap((r) => {
        const applied = this.applied.get(r);
        if (applied === undefined || !touched(...r.tables)) return [];
        return r.horizon ? r.horizon.reads(applied) : (r.reads?.(applied) ?? []);
      }),
    ];
  }

  /**
   * In a batch of row bodies (shared order), before them: the mirrors of `tables` brought up to
   * the rows (RowBody.fresh, Ctx.rowRead; MIRRORS_READ_FRESH).
   * - By row version (the path index): no transaction that writes what it needs is in flight in
   *   the shared order (only line bodies write it, and they exclude every row body), and none
   *   moves the version: so the versions since this daemon's memory was last current (its last
   *   transaction in the global order, or its last freshen) say whether its tables changed at
   *   all, and when they did, every row stamped up to the row version read here has committed:
   *   the refresh that reads the rows above what it applied sees all of it, and what it applied
   *   moves to that version. Most calls find nothing changed and read one row.
   * - By horizon (the working trees): row bodies write them beside this read and move no
   *   version, so their delta is read every time, in the same round trip as that one row.
   */
  *freshen(tables: readonly string[]): Tx<void> {
    const since = Math.max(this.freshAt, this.seen());
    // The mirrors by horizon read their deltas every time, in the same round trip as where the
    // store stands (sent after it; they do not need its answer).
    const horizons = this.refreshers.filter((r) => r.horizon && r.tables.some((t) => tables.includes(t)));
    const froms: (number | null)[] = horizons.map((r) => this.applied.get(r) ?? null);
    const reads = horizons.map((r, i) => r.horizon!.reads(froms[i] ?? null));
    const [first, ...answers] = yield* gather(standingRead(since), ...reads.flat());
    const at = standingAnswer(first, since);
    let from = 0;
    for (const [i, r] of horizons.entries()) {
      const mine = answers.slice(from, (from += reads[i]!.length));
      // Deleted keys trimmed past where it stood (rare): read whole, a round trip more.
      const start = froms[i] ?? null;
      if (start !== null && start <= at.rows.xfloor) yield* this.byHorizon(r, r.horizon!, null);
      else yield* this.byHorizon(r, r.horizon!, start, mine);
    }
    for (const r of this.refreshers) {
      if (r.horizon || !r.tables.some((t) => tables.includes(t))) continue;
      if (at.changed && !r.tables.some((t) => at.changed!.has(t))) continue;
      yield* r.refresh!(this.deltaFrom(r, at.rows));
      this.applied.set(r, at.rows.ver);
    }
    this.freshAt = at.version;
  }

  /**
   * In the shared order (a read beside row bodies, the status snapshot's): whether this daemon's
   * waiter lines are the stored ones, so a read of them needs no catch-up in the exclusive order.
   * Lines change only in that order; each such transaction moves the version and names the
   * tables it wrote, and none runs while this read holds the order shared. So they are when no
   * version since this daemon's memory was last current wrote the lines or the grants to its
   * waiters (nor forgot a daemon), and the daemons' liveness was not seen to move meanwhile
   * (which judges every place again). One row read (`standing`), as freshen's.
   */
  *linesCurrent(): Tx<boolean> {
    const seen = this.seen();
    if (seen < 0 || this.livenessMoved()) return false;
    const at = yield* standing(seen);
    return at.version === seen || (at.changed !== null && !LINE_TABLES.some((t) => at.changed!.has(t)));
  }

  /**
   * Where a reader's delta starts: the row version it applied, unless that is not known or the
   * keys of deleted rows were trimmed past it (null: read its tables whole).
   */
  private deltaFrom(reader: object, rows: RowVersions): number | null {
    const applied = this.applied.get(reader);
    return applied !== undefined && applied >= rows.floor ? applied : null;
  }

  /** Grants to answer or hand back, then (if they changed) the lines. */
  private *catchUpLines(lines: boolean, grants: boolean, since: number | null): Tx<void> {
    // Every daemon this store knows, whether its heartbeat is recent, and whether it is lost.
    const daemons = yield* all<{ id: string; live: boolean; lost: boolean }>(...DAEMONS_READ);
    // A daemon dead for FORGET_AFTER_MS is forgotten: its waiters' graces start (lines.ts).
    const lost = lines && daemons.some((d) => d.lost && d.id !== this.me);
    const forgotten = lost ? yield* all<{ id: string }>(`DELETE FROM daemons WHERE seen_at < ${DB_NOW} - ? AND id <> ? RETURNING id`, FORGET_AFTER_MS, this.me) : [];
    const known = new Set([this.me, ...daemons.map((d) => d.id)]);
    const live = new Set([this.me, ...daemons.filter((d) => d.live).map((d) => d.id)]);
    for (const f of forgotten) known.delete(f.id);

    for (const g of grants ? yield* all<GrantRow>(GRANTS_READ) : []) {
      const q = this.queues.get(g.queue);
      if (g.daemon === this.me) {
        // A grant another daemon made to a waiter here: answered now (before the lines are
        // reloaded, which would find that waiter gone and answer it as aborted).
        yield* run("DELETE FROM grants WHERE token = ?", g.token);
        const w = q?.get(g.token);
        if (q && w && w.daemon === undefined) yield* q.deliver(w, decodeValue(q, g.value));
      } else if (!live.has(g.daemon)) {
        // A grant to a daemon that died before answering it: nobody will, so it goes back.
        yield* run("DELETE FROM grants WHERE token = ?", g.token);
        if (q) yield* q.handBack(waiterOf(q, JSON.parse(g.waiter) as WaiterRow), decodeValue(q, g.value));
      }
    }

    if (lines) yield* this.lines.reload(live, known, since);
  }

  /** Writes down how this transaction changed the lines, and its grants to other daemons; whether it wrote anything. */
  *flush(): Tx<boolean> {
    let wrote = yield* this.lines.flush();
    this.grantedTo = new Set(this.grants.map((g) => g.daemon));
    for (const g of this.grants.splice(0)) {
      yield* run(
        "INSERT INTO grants (token, daemon, queue, waiter, value) VALUES (?, ?, ?, ?, ?) " +
          "ON CONFLICT (token) DO UPDATE SET daemon = excluded.daemon, queue = excluded.queue, waiter = excluded.waiter, value = excluded.value",
        g.token,
        g.daemon,
        g.queue,
        g.waiter,
        g.value,
      );
      wrote = true;
    }
    return wrote;
  }

  /**
   * Whether a call of this daemon is blocked right now in a stored line (a change-feed watcher
   * is not: a recorded change wakes it, through journalWanted, with no catch-up).
   */
  waiting(): boolean {
    for (const q of this.queues.values()) if (!q.local) for (const w of q.all()) if (w.daemon === undefined && w.attached) return true;
    return false;
  }

  watchingJournal(): boolean {
    return this.journal.watching();
  }

  journalWanted(): Tx<boolean> {
    return this.journal.wanted();
  }

  concernedDaemons(): ReadonlySet<string> {
    const places = this.lines.othersWritten();
    return this.grantedTo.size === 0 ? places : new Set([...places, ...this.grantedTo]);
  }

  /** A transaction failed: what flush believed written may not be; the next catch-up rereads it all. */
  forget(): void {
    this.lines.forget();
    this.grants = [];
    this.applied.clear();
    this.freshAt = -1;
  }

  /** The daemons with a recent heartbeat, this one included (whose call tasks are not orphans). */
  *liveDaemonIds(): Tx<Set<string>> {
    const rows = yield* all<{ id: string }>(`SELECT id FROM daemons WHERE seen_at >= ${DB_NOW} - ?`, DEAD_AFTER_MS);
    return new Set([this.me, ...rows.map((r) => r.id)]);
  }

  /** How many daemons share the store now (live heartbeats), for status. */
  *liveDaemons(): Tx<number> {
    return (yield* get<{ n: number }>(`SELECT COUNT(*) AS n FROM daemons WHERE seen_at >= ${DB_NOW} - ?`, DEAD_AFTER_MS))?.n ?? 0;
  }

}

/**
 * What a catch-up of `changed` (null: not known) reads: the tables it touches, and whether the
 * lines and the grants are among them. The daemons' liveness moved (or a catch-up forgot a
 * daemon): every reader reads its delta, for the rows a daemon's row bodies stamped, which no
 * version named.
 */
function catchingUp(changed: ReadonlySet<string> | null): { touched: (...tables: string[]) => boolean; lines: boolean; grants: boolean } {
  const everything = changed === null || changed.has("daemons");
  const touched = (...tables: string[]) => everything || tables.some((t) => changed!.has(t));
  return { touched, lines: touched("waiters"), grants: touched("grants") };
}

/** A waiter that is in no line (a grant's), rebuilt from its row for the hand-back. */
function waiterOf(q: AnyQueue, r: WaiterRow): AnyWaiter {
  const s = fromRow(q, { ...r, grace_ends: r.grace_ends ?? null });
  return { id: 0, keys: s.keys, key: s.keys[0]!, token: s.token, agentId: s.agentId, req: s.req, since: s.since, order: s.order, attached: false, daemon: s.daemon };
}

function encodeValue(q: AnyQueue, value: unknown): string {
  return JSON.stringify(q.codec?.encodeValue ? q.codec.encodeValue(value) : value);
}

function decodeValue(q: AnyQueue, text: string): unknown {
  const json = JSON.parse(text) as unknown;
  return q.codec?.decodeValue ? q.codec.decodeValue(json) : json;
}
