// Several daemons on one shared store (docs/cluster.md). The store runs every transaction of
// every daemon in one global order (an advisory lock), so the rows need nothing more: one
// holder per lock, distinct counters, one claimer per task, shared capacity and overlap hold
// as they do on one daemon. What each daemon keeps in memory needs this module:
// - the waiter lines: kept in the table `waiters`, every daemon's waiters in one order. Each
//   transaction that another daemon committed since this one last looked starts with a catch-up
//   that reloads them (catchUp), and each transaction ends by writing down what changed here
//   (flush). So a freeing transaction on any daemon sees the earliest attached waiter wherever
//   it is, and the same policies (FIFO, reservations, offers, pauses) apply across daemons;
// - a grant to another daemon's waiter: written into `grants` (flush), and the store's NOTIFY
//   wakes that daemon, whose catch-up answers the blocked call, or hands the grant back if the
//   call's client is gone (the waiter mechanism's rule, unchanged);
// - caches and timers (pool rows, the path index, expiry timers): refreshed by the catch-up
//   from the rows, so an expiry fires on whichever daemon gets there first and finds the row
//   still due (every expiry handler checks the row, so a second one does nothing);
// - daemons: each heartbeats its row in `daemons` (the store does it). The waiters of a daemon
//   silent for DEAD_AFTER_MS count as detached (never granted; they keep their place), a grant
//   it never answered is handed back, and once its row is gone its waiters leave the line.
import { DEAD_AFTER_MS } from "../store/store.ts";
import { all, get, run, type Tx } from "../store/tx.ts";
import type { Journal } from "./journal.ts";
import type { SharedWaiter, Waiter, WaitQueue } from "./wait.ts";

/** A dead daemon's row (and then its waiters' places) is forgotten after this. */
export const FORGET_AFTER_MS = 120_000;

// The database's clock, in the milliseconds the heartbeats are written in: daemons on
// machines whose clocks disagree still agree on who is alive.
const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

interface WaiterRow {
  token: string;
  queue: string;
  keys: string;
  agent_id: string | null;
  req: string;
  ord: number;
  since: number;
  attached: boolean;
  daemon: string;
}

interface GrantRow {
  token: string;
  daemon: string;
  queue: string;
  waiter: string;
  value: string;
}

type AnyQueue = WaitQueue<unknown, unknown>;
type AnyWaiter = Waiter<unknown, unknown>;

export class Cluster {
  /** Each waiter's row as this daemon last wrote or read it: flush writes only what differs. */
  private readonly written = new Map<string, string>();
  /** Grants to other daemons' waiters made by the running transaction, for flush. */
  private grants: GrantRow[] = [];

  constructor(
    private readonly me: string,
    private readonly queues: ReadonlyMap<string, AnyQueue>,
    private readonly journal: Journal,
    /** Each primitive's refresh (drop caches, re-arm timers from the rows), and the tables it reads. */
    private readonly refreshers: readonly { tables: readonly string[]; refresh: () => Tx<void> }[],
  ) {
    for (const q of queues.values()) {
      q.onForeignGrant = (w, value) => {
        this.grants.push({ token: w.token, daemon: w.daemon!, queue: q.name, waiter: JSON.stringify(this.rowOf(q, w)), value: encodeValue(q, value) });
      };
    }
  }

  /**
   * Another daemon committed since this one last looked: bring memory up to the rows. `changed`
   * names the tables those transactions wrote (null: unknown, so everything is reread); only
   * what they touched is reread.
   */
  *catchUp(changed: ReadonlySet<string> | null): Tx<void> {
    const touched = (...tables: string[]) => changed === null || tables.some((t) => changed.has(t));
    const lines = touched("waiters", "daemons");
    const grants = touched("grants", "daemons");
    if (lines || grants) yield* this.catchUpLines(lines, grants);
    for (const { tables, refresh } of this.refreshers) if (touched(...tables)) yield* refresh();
    if (touched("journal")) yield* this.journal.catchUp();
  }

  /** Grants to answer or hand back, then (if they changed) the lines. */
  private *catchUpLines(lines: boolean, grants: boolean): Tx<void> {
    // Every daemon this store knows, and whether its heartbeat is recent.
    const daemons = yield* all<{ id: string; live: boolean }>(`SELECT id, seen_at >= ${DB_NOW} - ? AS live FROM daemons`, DEAD_AFTER_MS);
    const known = new Set([this.me, ...daemons.map((d) => d.id)]);
    const live = new Set([this.me, ...daemons.filter((d) => d.live).map((d) => d.id)]);

    for (const g of grants ? yield* all<GrantRow>("SELECT * FROM grants") : []) {
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
        if (q) yield* q.handBack(this.waiterOf(q, JSON.parse(g.waiter) as WaiterRow), decodeValue(q, g.value));
      }
    }

    if (lines) yield* this.reloadLines(live, known);
  }

  /** The lines, as every daemon left them; and the places of daemons forgotten go. */
  private *reloadLines(live: ReadonlySet<string>, known: ReadonlySet<string>): Tx<void> {
    const dead = new Set<string>();
    const byQueue = new Map<string, SharedWaiter<unknown>[]>();
    this.written.clear();
    for (const r of yield* all<WaiterRow>("SELECT * FROM waiters ORDER BY ord")) {
      const q = this.queues.get(r.queue);
      if (!q) continue;
      this.written.set(r.token, rowText(r));
      if (!live.has(r.daemon)) dead.add(r.daemon);
      let line = byQueue.get(r.queue);
      if (!line) byQueue.set(r.queue, (line = []));
      line.push(this.shared(q, r));
    }
    for (const q of this.queues.values()) q.reload(byQueue.get(q.name) ?? [], this.me, dead);
    // A daemon forgotten (its row gone: it stopped, or was dead for FORGET_AFTER_MS): its
    // waiters' places go, as detached waiters' do when their grace ends.
    yield* run(`DELETE FROM daemons WHERE seen_at < ${DB_NOW} - ? AND id <> ?`, FORGET_AFTER_MS, this.me);
    for (const q of this.queues.values()) {
      for (const w of [...q.all()]) if (w.daemon !== undefined && !known.has(w.daemon)) yield* q.expireForeign(w);
    }
  }

  /** Writes down how this transaction changed the lines, and its grants to other daemons; whether it wrote anything. */
  *flush(): Tx<boolean> {
    let wrote = false;
    const seen = new Set<string>();
    for (const q of this.queues.values()) {
      for (const w of q.all()) {
        seen.add(w.token);
        const row = this.rowOf(q, w);
        const text = rowText(row);
        if (this.written.get(w.token) === text) continue;
        yield* run(
          "INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) " +
            "ON CONFLICT (token) DO UPDATE SET queue = excluded.queue, keys = excluded.keys, agent_id = excluded.agent_id, req = excluded.req, " +
            "ord = excluded.ord, since = excluded.since, attached = excluded.attached, daemon = excluded.daemon",
          row.token,
          row.queue,
          row.keys,
          row.agent_id,
          row.req,
          row.ord,
          row.since,
          row.attached,
          row.daemon,
        );
        this.written.set(w.token, text);
        wrote = true;
      }
    }
    for (const token of [...this.written.keys()]) {
      if (seen.has(token)) continue;
      yield* run("DELETE FROM waiters WHERE token = ?", token);
      this.written.delete(token);
      wrote = true;
    }
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

  /** Whether any call of this daemon is blocked right now (a waiter or a change-feed watcher). */
  waiting(): boolean {
    for (const q of this.queues.values()) for (const w of q.all()) if (w.daemon === undefined && w.attached) return true;
    return false;
  }

  /** A transaction failed: what flush believed written may not be; the next catch-up rereads it all. */
  forget(): void {
    this.written.clear();
    this.grants = [];
  }

  /** How many daemons share the store now (live heartbeats), for status. */
  *liveDaemons(): Tx<number> {
    return (yield* get<{ n: number }>(`SELECT COUNT(*) AS n FROM daemons WHERE seen_at >= ${DB_NOW} - ?`, DEAD_AFTER_MS))?.n ?? 0;
  }

  private rowOf(q: AnyQueue, w: AnyWaiter): WaiterRow {
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
    };
  }

  private shared(q: AnyQueue, r: WaiterRow): SharedWaiter<unknown> {
    const req = JSON.parse(r.req) as unknown;
    return {
      token: r.token,
      keys: JSON.parse(r.keys) as string[],
      agentId: r.agent_id ?? undefined,
      req: q.codec ? q.codec.decodeReq(req) : req,
      order: r.ord,
      since: r.since,
      attached: r.attached,
      daemon: r.daemon,
    };
  }

  /** A waiter that is in no line (a grant's), rebuilt from its row for the hand-back. */
  private waiterOf(q: AnyQueue, r: WaiterRow): AnyWaiter {
    const s = this.shared(q, r);
    return { id: 0, keys: s.keys, key: s.keys[0]!, token: s.token, agentId: s.agentId, req: s.req, since: s.since, order: s.order, attached: false, daemon: s.daemon };
  }
}

/** A row's identity for flush's comparison: every field, in one order. */
function rowText(r: WaiterRow): string {
  return JSON.stringify([r.queue, r.keys, r.agent_id, r.req, r.ord, r.since, r.attached, r.daemon]);
}

function encodeValue(q: AnyQueue, value: unknown): string {
  return JSON.stringify(q.codec?.encodeValue ? q.codec.encodeValue(value) : value);
}

function decodeValue(q: AnyQueue, text: string): unknown {
  const json = JSON.parse(text) as unknown;
  return q.codec?.decodeValue ? q.codec.decodeValue(json) : json;
}
