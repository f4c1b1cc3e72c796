// The waiter lines' one stored form, on both stores: the table `waiters`, one row per place in
// line (its queue, keys, agent, the primitive's request as JSON, its arrival order, whether its
// call blocks now, whose daemon it is, and when its grace ends once detached). Each
// transaction ends by writing down the rows its changes made differ (flush: only those), so:
// - SQLite's restart loads them (load): every place whose call can outlive it (locks, path
//   claims, slot requests: a grace > 0) comes back detached, its grace where it stood;
// - a shared store's catch-up brings them up to every daemon's (reload, from src/domain/cluster.ts:
//   the places stamped since the row version it applied, and the tokens of those that left), and
//   a place whose daemon has left (it stopped, or was dead and forgotten) stays in line,
//   detached, with its grace: any daemon its agent calls resumes it, and whichever daemon
//   gets there first expires it when the grace ends (the others find it gone).
// A grace-0 queue (events, task claims, journal watchers) holds only calls that block right
// now: SQLite does not store it (nothing would come back), and a departed daemon's places in
// it leave at once. The journal watchers' queue is local: no store keeps it, since a change
// wakes every watcher it matches and no daemon grants another's (docs/cluster.md, "Watchers
// off the stored lines").
import { all, runLater, type Stmt, type Tx } from "../store/tx.ts";
import { deltaReads, deltaSince } from "./mirror.ts";
import { rowsSince } from "./row-versions.ts";
import type { WaitQueue } from "./wait.ts";
import type { SharedWaiter, Waiter } from "./waiter.ts";

/** The daemon name SQLite's rows carry: one daemon owns the file. */
export const LOCAL_DAEMON = "local";

export interface WaiterRow {
  token: string;
  queue: string;
  keys: string;
  agent_id: string | null;
  req: string;
  ord: number;
  since: number;
  attached: boolean;
  daemon: string;
  grace_ends: number | null;
}

type AnyQueue = WaitQueue<unknown, unknown>;
type AnyWaiter = Waiter<unknown, unknown>;

/** Stored places read for the lines: by queue, the daemons they belong to, and (a delta) the tokens deleted. */
interface Read {
  byQueue: Map<string, SharedWaiter<unknown>[]>;
  inRows: Set<string>;
  gone?: string[];
}

export class Lines {
  /** The queues whose lines are stored, by name. */
  private readonly kept = new Map<string, AnyQueue>();
  /** Each waiter's row as last written or read: flush writes only what differs. */
  private written = new Map<string, string>();
  /** Waiters changed since the last flush (joined, left, attached, detached, request changed). */
  private readonly dirty = new Map<AnyWaiter, AnyQueue>();
  /** Compare every waiter (after a reload); resync: first reread what the rows hold (after a rollback). */
  private rescan = false;
  private resync = false;
  /** The live and known daemons at the last reload: a delta holds only while they stay the same. */
  private daemons = "";
  private closed = false;
  /** The other daemons whose places the last flush wrote or deleted: they own, or owned before, each (othersWritten). */
  private readonly others = new Set<string>();

  constructor(
    private readonly me: string,
    queues: ReadonlyMap<string, AnyQueue>,
    shared: boolean,
    /** The store's afterCommit: a rolled-back flush leaves `written` wrong. */
    private readonly afterCommit: (fn: () => void, orElse?: () => void) => void,
  ) {
    for (const q of queues.values()) {
      // On a shared store every line is stored (other daemons' calls block in them too) but a
      // local one's (the change feed's watchers: WaitQueueOptions.local).
      if ((!shared && q.graceMs <= 0) || q.local) continue;
      this.kept.set(q.name, q);
      q.onWaiterChanged = (w) => void this.dirty.set(w, q);
      // On a shared store a row body reads the rows, not memory (which may not have caught up).
      if (shared) {
        q.storedLine = (key) => this.standsIn(q.name, key);
        q.nobodyStored = (key) => ({ sql: NOBODY_STORED, args: [q.name, containing(JSON.stringify(key))] });
      }
    }
  }

  /**
   * Whether any daemon's waiter has a place in key's line of this queue, as the rows say. Read
   * by a row body (docs/cluster.md, "Scaling out"): in the shared order no transaction that
   * changes the lines runs, and every one flushed them before it committed, so the rows are
   * every daemon's lines as they stand.
   */
  private *standsIn(queue: string, key: string): Tx<boolean> {
    // Only the rows whose keys hold the key's JSON text come back (a place in another name's
    // line costs the server a comparison, not a row sent and parsed here); the parse decides.
    const rows = yield* all<{ keys: string }>("SELECT keys FROM waiters WHERE queue = ? AND keys LIKE ? ESCAPE '!'", queue, containing(JSON.stringify(key)));
    return rows.some((r) => (JSON.parse(r.keys) as string[]).includes(key));
  }

  /** Whether flush has anything to do: false on every transaction that left the lines alone. */
  pending(): boolean {
    return !this.closed && (this.dirty.size > 0 || this.rescan || this.resync);
  }

  /**
   * SQLite at start: the places as the last run left them, in their order. No call blocks yet,
   * so each is detached; its grace ends where it stood, or (its call blocked when the daemon
   * stopped) one grace from now. Rows of lines not kept (grace 0, unknown) go.
   */
  *load(): Tx<void> {
    const { byQueue, inRows: daemons } = yield* this.readRows();
    // Every row is another daemon's (its last run's), none of whose calls block now.
    for (const q of this.kept.values()) {
      q.reload(byQueue.get(q.name) ?? [], "", daemons);
      for (const w of [...q.all()]) {
        q.adopt(w);
        q.keep(w, false, w.graceEnds);
      }
    }
    this.rescan = true;
  }

  /**
   * A shared store's catch-up: the lines become the rows, as every daemon left them. `live`:
   * daemons with a recent heartbeat (the others' calls count as detached); `known`: daemons
   * with a row. A place whose daemon has left keeps its place detached, with its grace.
   * `since`: every change up to this row version is applied here already (cluster.ts), so the
   * places stamped above it and the tokens deleted above it are all that changed; unless the
   * daemons' liveness moved since the last reload (every place of theirs is judged again then)
   * or memory and the rows may disagree, which a whole reload settles.
   */
  *reload(live: ReadonlySet<string>, known: ReadonlySet<string>, since: number | null = null): Tx<void> {
    const daemons = JSON.stringify([[...live].sort(), [...known].sort()]);
    const delta = since !== null && !this.resync && daemons === this.daemons;
    this.daemons = daemons;
    const { byQueue, inRows, gone } = delta ? yield* this.readDelta(since) : yield* this.readRows();
    const dead = new Set([...inRows].filter((d) => !live.has(d)));
    const placed: [AnyQueue, AnyWaiter][] = [];
    let whole = true;
    for (const q of this.kept.values()) {
      const rows = byQueue.get(q.name) ?? [];
      if (delta && rows.length === 0 && gone!.length === 0) continue;
      if (!q.reload(rows, this.me, dead, gone)) whole = false;
      for (const w of delta ? rows.flatMap((r) => q.get(r.token) ?? []) : [...q.all()]) placed.push([q, w]);
    }
    if (!whole) return yield* this.reload(live, known); // a delta met what only a whole reload settles
    if (!delta) {
      // Every place is compared with its row at the flush (a delta's are dirty already: they were linked).
      this.dirty.clear();
      this.rescan = true;
      this.resync = false;
    }
    for (const [q, w] of placed) {
      if (w.daemon === undefined || known.has(w.daemon) || q.get(w.token) !== w) continue;
      // Its grace started with the first daemon that saw it gone (stored since), or now.
      if (q.graceMs <= 0) yield* q.expireForeign(w);
      else q.keep(w, false, w.graceEnds);
    }
  }

  /** Writes down the rows this transaction's changes made differ; whether it wrote anything. */
  *flush(): Tx<boolean> {
    this.others.clear();
    if (!this.pending()) return false;
    if (this.resync) {
      this.written = new Map((yield* all<WaiterRow>("SELECT * FROM waiters")).map((r) => [r.token, rowText(r)]));
      this.resync = false;
      this.rescan = true;
    }
    let wrote = false;
    if (this.rescan) {
      this.rescan = false;
      this.dirty.clear();
      const seen = new Set<string>();
      for (const q of this.kept.values()) {
        for (const w of q.all()) {
          seen.add(w.token);
          if (yield* this.write(q, w)) wrote = true;
        }
      }
      for (const token of [...this.written.keys()]) if (!seen.has(token) && (yield* this.drop(token))) wrote = true;
    } else {
      const changed = [...this.dirty];
      this.dirty.clear();
      for (const [w, q] of changed) {
        const now = q.get(w.token);
        if (now === w) {
          if (yield* this.write(q, w)) wrote = true;
        } else if (now === undefined && (yield* this.drop(w.token))) {
          wrote = true;
        }
      }
    }
    if (wrote) this.afterCommit(() => {}, () => this.forget());
    return wrote;
  }

  /**
   * The other daemons owning, or having owned, a place the last flush wrote or deleted (a grant's
   * waiter, a place adopted, a departed daemon's): only such a change can answer a call blocked
   * there, and only there. A flush after a resync compares every row, so it may name the owner
   * of a row it only rewrote.
   */
  othersWritten(): ReadonlySet<string> {
    return this.others;
  }

  /** A transaction failed: what flush believed written may not be; the next flush rereads the rows. */
  forget(): void {
    this.resync = true;
  }

  /** Shutdown: the lines as they stand stay stored (the queues are emptied after this). */
  close(): void {
    this.closed = true;
    this.dirty.clear();
  }

  /** A waiter's row, as this daemon would write it. */
  rowOf(q: AnyQueue, w: AnyWaiter): WaiterRow {
    const mine = w.daemon === undefined;
    return {
      token: w.token,
      queue: q.name,
      keys: JSON.stringify(w.keys),
      agent_id: w.agentId ?? null,
      req: JSON.stringify(q.codec ? q.codec.encodeReq(w.req) : w.req),
      ord: w.order,
      since: w.since,
      // Only the daemon whose call it is knows whether the call still blocks.
      attached: mine ? w.attached && !w.signal?.aborted : w.attached,
      daemon: w.daemon ?? this.me,
      grace_ends: w.attached ? null : (w.graceEnds ?? null),
    };
  }

  /**
   * Every stored place, in arrival order: what flush takes as written (so a rescan drops the
   * rows of lines not kept), each kept queue's places, and the daemons they belong to.
   */
  private *readRows(): Tx<Read> {
    this.written = new Map();
    return this.byQueue(yield* rowsSince<WaiterRow>("waiters", null, undefined, "ord"));
  }

  /** What readDelta(since) reads, for a shared store's BEGIN to send ahead (Cluster.readAhead). */
  reads(since: number): readonly Stmt[] {
    return deltaReads("waiters", since, "ord");
  }

  /** The places stamped above row version `since`, and the tokens deleted above it (the trigger's: migration 011). */
  private *readDelta(since: number): Tx<Read> {
    const delta = yield* deltaSince<WaiterRow>("waiters", since, "ord");
    const gone = delta.gone!.map(([token]) => token!); // since given: the deleted keys read
    for (const token of gone) this.written.delete(token);
    return { ...this.byQueue(delta.rows), gone };
  }

  private byQueue(rows: readonly WaiterRow[]): Read {
    const byQueue = new Map<string, SharedWaiter<unknown>[]>();
    const inRows = new Set<string>();
    for (const r of rows) {
      this.written.set(r.token, rowText(r));
      const q = this.kept.get(r.queue);
      if (!q) continue;
      inRows.add(r.daemon);
      let line = byQueue.get(r.queue);
      if (!line) byQueue.set(r.queue, (line = []));
      line.push(fromRow(q, r));
    }
    return { byQueue, inRows };
  }

  private *write(q: AnyQueue, w: AnyWaiter): Tx<boolean> {
    const r = this.rowOf(q, w);
    const text = rowText(r);
    const was = this.written.get(r.token);
    if (was === text) return false;
    if (r.daemon !== this.me) this.others.add(r.daemon);
    if (was !== undefined && daemonOf(was) !== this.me) this.others.add(daemonOf(was));
    yield* runLater(
      "INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) " +
        "ON CONFLICT (token) DO UPDATE SET queue = excluded.queue, keys = excluded.keys, agent_id = excluded.agent_id, req = excluded.req, " +
        "ord = excluded.ord, since = excluded.since, attached = excluded.attached, daemon = excluded.daemon, grace_ends = excluded.grace_ends",
      r.token,
      r.queue,
      r.keys,
      r.agent_id,
      r.req,
      r.ord,
      r.since,
      r.attached,
      r.daemon,
      r.grace_ends,
    );
    this.written.set(r.token, text);
    return true;
  }

  private *drop(token: string): Tx<boolean> {
    const was = this.written.get(token);
    if (was === undefined) return false;
    this.written.delete(token);
    if (daemonOf(was) !== this.me) this.others.add(daemonOf(was));
    yield* runLater("DELETE FROM waiters WHERE token = ?", token);
    return true;
  }
}

/** A row as a queue's reload takes it. */
export function fromRow(q: AnyQueue, r: WaiterRow): SharedWaiter<unknown> {
  const req = JSON.parse(r.req) as unknown;
  return {
    token: r.token,
    keys: JSON.parse(r.keys) as string[],
    agentId: r.agent_id ?? undefined,
    req: q.codec ? q.codec.decodeReq(req) : req,
    order: Number(r.ord),
    since: Number(r.since),
    attached: Boolean(r.attached),
    daemon: r.daemon,
    graceEnds: r.grace_ends === null ? undefined : Number(r.grace_ends),
  };
}

/**
 * standsIn as a condition (WaitQueue.nobodyStored): no row whose keys hold the key's JSON text
 * (containing's pattern). It cannot parse what it matched, so a row it cannot rule out (a name
 * holding the key's text, quotes and all) counts as a place: a row body that finds one writes
 * nothing and leaves the call to its line body, which reads memory.
 */
const NOBODY_STORED = "NOT EXISTS (SELECT 1 FROM waiters WHERE queue = ? AND keys LIKE ? ESCAPE '!')";

/**
 * A LIKE pattern that matches every text containing `text` (`!` escapes LIKE's wildcards and
 * itself). A place's keys are stored as JSON.stringify of its names, so a row whose line holds
 * a name contains that name's JSON text: the pattern never misses one. It may match a row that
 * does not (a quote escaped inside a longer name; SQLite's LIKE ignores ASCII case), so the
 * caller checks what it matched.
 */
export function containing(text: string): string {
  return `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** The daemon of a row as rowText wrote it. */
function daemonOf(text: string): string {
  return (JSON.parse(text) as unknown[])[7] as string;
}

/** A row's identity for flush's comparison: every field, in one order (SQLite's 0/1 read as a boolean). */
function rowText(r: WaiterRow): string {
  return JSON.stringify([r.queue, r.keys, r.agent_id, r.req, Number(r.ord), Number(r.since), Boolean(r.attached), r.daemon, r.grace_ends === null ? null : Number(r.grace_ends)]);
}
