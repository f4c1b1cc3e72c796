// What every primitive is built from: the store, the clock, the scheduler, and a transaction
// helper that first runs any expiry that is due, so that no call ever sees a lapsed lock,
// lease or heartbeat as live, even when the timer has not fired yet.
import { AirlockError } from "../errors.ts";
import { andThen, type Awaitable, detached, type Store } from "../store/store.ts";
import { type Condition, pure, type Tx } from "../store/tx.ts";
import type { Clock } from "./clock.ts";
import { createLog } from "../log.ts";
import { Scheduler } from "./timers.ts";
import { WaitQueue, type WaitQueueOptions } from "./wait.ts";
import { Sequences, type Waiter } from "./waiter.ts";

/** Told that a call blocked in a line: its queue and its place. */
export type BlockListener = (queue: WaitQueue<unknown, unknown>, w: Waiter<unknown, unknown>) => void;

const log = createLog("scheduler");

/**
 * The mirrored tables a batch of row bodies may bring up to the rows before its bodies run
 * (Ctx.rowRead's `fresh`: Cluster.freshen), each for its own reason:
 * - path_claims: only line bodies write its rows (claims, releases, renewals, departures,
 *   expiries), and they exclude every row body, so a row version read in the shared order
 *   bounds every stamp still to commit. Any row-body write to it would break that: keep the
 *   claims and the row bodies apart.
 * - worktrees: row bodies write it (every report that finds its row as memory says), so its
 *   mirror follows the rows by deltas by horizon, which need no such bound (mirror.ts,
 *   horizonReads; docs/cluster.md, "Working-tree reports beside the order").
 */
export const MIRRORS_READ_FRESH = ["path_claims", "worktrees"] as const;
export type MirroredTable = (typeof MIRRORS_READ_FRESH)[number];

export interface Ctx {
  readonly store: Store;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** One transaction running the body fn makes, with due expiries processed first. */
  tx<T>(fn: () => Tx<T>): Awaitable<T>;
  /** A read of current state (due expiries processed first, if any). */
  read<T>(fn: () => Tx<T>): Awaitable<T>;
  /**
   * A row body's transaction, or its read (store.ts, RowBody): on a shared store it runs in the
   * shared order, beside other daemons' row bodies. It must touch only rows no daemon mirrors
   * in memory, with atomic statements, and lock at most the one row of `table` that `key`
   * names. Due expiries run first, in a transaction of their own, as for any call.
   */
  rowTx<T>(table: string, key: string, fn: () => Tx<T>): Awaitable<T>;
  /**
   * `fresh`: mirrors the body reads (docs/cluster.md, "Reads of the path index in the shared
   * order"), brought up to the rows once for its batch, before any of its bodies runs. Only the
   * tables MIRRORS_READ_FRESH names (each says why it may be read fresh in the shared order).
   */
  rowRead<T>(table: string, key: string, fn: () => Tx<T>, fresh?: readonly MirroredTable[]): Awaitable<T>;
  /**
   * A call that needs its line only when someone stands in it (docs/cluster.md, "Scaling out"):
   * on a shared store, when memory shows nobody in `key`'s line of `q`, `fn` runs as a row body
   * of `table`'s row `key`, and its answer stands unless it is null. The stored lines are asked
   * by fn's own write, not by a read before it (which would send the write behind those of the
   * bodies after it, in another order than their keys'): `nobody` is a condition true when no
   * stored place may stand in key's line, which fn's write includes, so fn may end with last()
   * and its batch commit in one flight (docs/cluster.md, "A row batch in one flight"). fn
   * answers null when its statement wrote nothing (someone in line, or the row not as it needs
   * it): the caller's line body decides, as it always did. Null at once, not a promise, where no
   * row body is tried (not a shared store, or a line here already): the caller's line body then
   * starts in the same turn, as it did before row bodies existed.
   */
  rowIfNobody<T>(q: { line(key: string): readonly unknown[]; nobodyStored: ((key: string) => Condition) | undefined }, table: string, key: string, fn: (nobody: Condition) => Tx<T | null>): Promise<T | null> | null;
  /**
   * A read of rows and of this daemon's waiter lines (list_locks, list_pools, the status
   * snapshot). On a shared store it runs first in the shared order, beside the other
   * daemons' row bodies, its path index brought up to the rows first (freshen), and is answered
   * there when the lines in memory are the stored ones (`linesCurrent`) and fn(true) does not
   * decline (null); else fn(false) runs as `read` does, in the global order, which catches up
   * first. SQLite: fn(false). fn(false) answers.
   */
  readLines<T>(fn: (beside: boolean) => Tx<T | null>): Awaitable<T>;
  /**
   * A shared store, in the shared order: whether this daemon's lines are the stored ones
   * (Cluster.linesCurrent); set by the kernel once the cluster is attached, absent before and
   * on SQLite.
   */
  linesCurrent: (() => Tx<boolean>) | undefined;
  /** Whether the body running now is a row body in the shared order (never on SQLite). */
  inSharedOrder(): boolean;
  /**
   * Whether row bodies overlap other daemons' (a shared store). Elsewhere a row body is one more
   * transaction like any other, so a call that tries one before a line body gains nothing there.
   */
  readonly rowsOverlap: boolean;
  /**
   * A waiter queue whose detached waiters keep their place for graceMs; hooks give its policy.
   * Unless `quiet`, changes to its lines are announced to onWaitsChanged listeners. `local`: on a
   * shared store its lines are this daemon's alone, never stored (WaitQueueOptions.local).
   */
  waitQueue<Req, R>(name: string, graceMs: number, hooks?: Pick<WaitQueueOptions<Req, R>, "onDetach" | "onExpire" | "revoke" | "codec">, opts?: { quiet?: boolean; local?: boolean }): WaitQueue<Req, R>;
  /** Every queue made here, by name (the cluster keeps them in the shared store). */
  readonly queues: ReadonlyMap<string, WaitQueue<unknown, unknown>>;
  /** The waiter ids, arrival orders and hand-off count this kernel's queues share (its own, no other's). */
  readonly sequences: Readonly<Sequences>;
  /**
   * Calls fn once, the next time any resource line changes (a waiter joins or leaves, or starts
   * or stops blocking): what the dashboard shows but the journal does not record. Returns a
   * function that cancels it.
   */
  onceWaitsChanged(fn: () => void): () => void;
  /**
   * Calls fn each time a call made with this signal blocks in a line (a call task needs its place);
   * returns a function that stops it. Per kernel: the signal is the call's own.
   */
  watchBlocks(signal: AbortSignal, fn: BlockListener): () => void;
}

export function createCtx(store: Store, clock: Clock): Ctx {
  let waitListeners = new Set<() => void>();
  const waitsChanged = () => {
    if (waitListeners.size === 0) return; // the common case: nobody watches
    const due = waitListeners;
    waitListeners = new Set();
    for (const fn of due) fn();
  };
  const scheduler = new Scheduler(
    clock,
    (work) => store.tx(work),
    (err) => log.error("an expiry failed (it will not be retried):", err),
    // On a shared store, deadlines armed from other daemons' rows are looked at in the shared
    // order first (timers.ts, docs/cluster.md "An expiry on every daemon").
    store.shared ? (work) => store.read(work(), { key: "scheduler:look" }) : undefined,
    store.shared ? (key) => store.shared!.turn(key) : undefined,
  );
  // Due expiries commit on their own first: if the call's body throws, its rollback must not
  // undo a hand-off whose waiter has already left the line and whose scheduler entry is spent.
  // A row body leaves the deadlines armed from other daemons' rows to their look: it never acts
  // on a row whose deadline passed (every row body's statement checks it, as it must for rows
  // this daemon never armed at all).
  const dueFirst = <T>(then: () => Awaitable<T>, rowBody = false): Awaitable<T> =>
    scheduler.hasDue(rowBody) ? andThen(store.tx(() => scheduler.runDue()), then) : then();
  const queues = new Map<string, WaitQueue<unknown, unknown>>();
  const sequences = new Sequences();
  const blockWatch = new WeakMap<AbortSignal, BlockListener>();
  const onBlock = (q: WaitQueue<unknown, unknown>, w: Waiter<unknown, unknown>, signal: AbortSignal) => blockWatch.get(signal)?.(q, w);
  const ctx: Ctx = {
    store,
    clock,
    scheduler,
    tx(fn) {
      return dueFirst(() =>
        store.tx(function* () {
          // Anything that fell due in the instant since is still processed before fn reads.
          if (scheduler.hasDue()) yield* scheduler.runDue();
          return yield* fn();
        }),
      );
    },
    read(fn) {
      return dueFirst(() => store.read(fn()));
    },
    rowTx(table, key, fn) {
      return dueFirst(() => store.tx(fn, { key: rowKey(table, key) }), true);
    },
    rowRead(table, key, fn, fresh) {
      return dueFirst(() => store.read(fn(), { key: rowKey(table, key), ...(fresh ? { fresh } : {}) }), true);
    },
    rowIfNobody(q, table, key, fn) {
      const nobody = q.nobodyStored?.(key);
      if (!ctx.rowsOverlap || !nobody || q.line(key).length > 0) return null;
      return Promise.resolve(ctx.rowTx(table, key, () => (q.line(key).length > 0 ? pure(null) : fn(nobody))));
    },
    readLines(fn) {
      const current = ctx.linesCurrent;
      const inOrder = () => ctx.read(function* () {
        return (yield* fn(false))!;
      });
      if (!current) return inOrder();
      // The path index is memory too (the wait-for graph's path edges): its mirrors brought up
      // to the rows for the read, as a check's are (MIRRORS_READ_FRESH). On a
      // connection of its own where the store has one (Store.readBeside): a long read (the
      // status snapshot) then holds none of this daemon's row batches.
      const body = function* () {
        return (yield* current()) ? yield* fn(true) : null;
      };
      const rows = { key: rowKey("waiters", ""), fresh: MIRRORS_READ_FRESH };
      const beside = dueFirst(() => (store.readBeside ? store.readBeside(body, rows) : store.read(body(), rows)), true);
      return andThen(beside, (answer) => answer ?? inOrder());
    },
    linesCurrent: undefined,
    inSharedOrder: () => store.inSharedOrder?.() ?? false,
    rowsOverlap: store.shared !== undefined,
    onceWaitsChanged(fn) {
      waitListeners.add(fn);
      return () => void waitListeners.delete(fn);
    },
    watchBlocks(signal, fn) {
      blockWatch.set(signal, fn);
      return () => void blockWatch.delete(signal);
    },
    queues,
    sequences,
    waitQueue(name, graceMs, hooks = {}, { quiet = false, local = false } = {}) {
      if (queues.has(name)) throw new Error(`two wait queues named ${name}`);
      const q = new WaitQueue({
        name,
        clock,
        sequences,
        scheduler,
        afterCommit: store.afterCommit,
        tx: (fn, what) => detached(() => store.tx(fn), (err) => log.error(`a ${name} waiter's ${what} failed:`, err)),
        graceMs,
        local: local && store.shared !== undefined,
        onBlock,
        ...(quiet ? {} : { onChange: waitsChanged }),
        ...hooks,
      });
      queues.set(name, q as WaitQueue<unknown, unknown>);
      return q;
    },
  };
  return ctx;
}

/**
 * A row body's place in the order its batch locks rows in (store.ts, RowBody): the table, then
 * the key, so two rows of different tables with the same key (a counter and an agent both named
 * "twin") are never taken in the order they were asked on one daemon and the other way round on
 * another, which PostgreSQL would end by failing one call as a deadlock. Table names never hold
 * a ":", so no two rows share a place.
 */
function rowKey(table: string, key: string): string {
  return `${table}:${key}`;
}

/** Remaining whole seconds until `at`, rounded up so that a live item never reports 0. */
export function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Every lease (a lock's, a slot's, a claim's, a task's, a presence's) must be > 0. */
export function assertTtl(ttlMs: number): void {
  if (!(ttlMs > 0)) throw new AirlockError("store", "store: ttlSeconds must be > 0");
}

/** Whole seconds since `at`. */
export function secondsSince(at: number, now: number): number {
  return Math.max(0, Math.floor((now - at) / 1000));
}
