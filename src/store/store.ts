// What the domain needs from a store, whichever it is: SQLite's embedded file (db.ts, answers
// every statement at once, so a transaction returns its result synchronously) or a shared
// PostgreSQL database (pg/, answers after a round trip, so a transaction returns a promise).
// The domain's transactions are generator bodies (tx.ts) and run unchanged on both.
import type { Durability } from "../config/settings.ts";
import type { Stmt, Tx } from "./tx.ts";

export type Awaitable<T> = T | Promise<T>;

export type StoreKind = "sqlite" | "postgres";

/**
 * A row body (docs/cluster.md, "Scaling out"): it touches only rows that no daemon mirrors in
 * memory, each with one atomic statement, so on a shared store it runs in the shared order,
 * overlapping other daemons' row bodies. `key` names the row it locks, table included (two
 * tables' rows never share a key: ctx.rowTx makes it from both): a batch of row bodies
 * runs them in key order, so two daemons' batches take their row locks in one order and
 * PostgreSQL never deadlocks. SQLite runs every body alike.
 */
export interface RowBody {
  key: string;
  /**
   * Mirrored tables the body reads from memory (only tables no row body writes): a shared
   * store's batch brings their mirrors up to the rows once, before its bodies run
   * (ClusterHooks.freshen).
   */
  fresh?: readonly string[];
}

export interface Store {
  readonly kind: StoreKind;
  /** Where the state lives, for messages: a file path, or a URL with its password as ***. */
  readonly path: string;
  readonly durability: Durability;
  /**
   * Runs the body fn makes in one transaction; after it commits, runs the afterCommit hooks it
   * queued. Transactions never interleave: a store runs one body at a time, so the in-memory
   * lines a body touches stay consistent with the rows it writes.
   */
  tx<T>(fn: () => Tx<T>, rows?: RowBody): Awaitable<T>;
  /** Runs a body outside any transaction (a read), in turn with transactions. */
  read<T>(body: Tx<T>, rows?: RowBody): Awaitable<T>;
  /**
   * A shared store: a read of rows and memory in the shared order on a connection of its own,
   * beside this daemon's transactions rather than in turn with them (pg/driver.ts, readBeside).
   * It writes nothing. Absent elsewhere: `read` does.
   */
  readBeside?<T>(fn: () => Tx<T>, rows: RowBody): Promise<T>;
  /** Whether the body running now is a row body in the shared order (never on SQLite). */
  inSharedOrder?(): boolean;
  /**
   * Queues work for after the current transaction commits; if it rolls back, `orElse` runs
   * instead (so that a waiter promised a grant by a transaction that failed is still answered).
   * Outside a transaction it runs at once.
   */
  afterCommit(fn: () => void, orElse?: () => void): void;
  /** Resolves once everything done so far is durable; null when it already is (no wait). */
  durable(): Promise<void> | null;
  /**
   * SQLite: fn runs at the end of every transaction's body, inside it, and returns the body to
   * run there, or null when there is nothing to do (the waiter lines' write-down,
   * src/domain/lines.ts). A shared store runs ClusterHooks.flush instead.
   */
  finishWith?(fn: () => Tx<unknown> | null): void;
  /** Finishes what is running and closes the connection. */
  close(): Awaitable<void>;
  /** Present when other daemons share this store (PostgreSQL): how this daemon takes part. */
  readonly shared?: SharedStore;
}

/** A daemon whose heartbeat is older than this is dead: its blocked calls count as detached. */
export const DEAD_AFTER_MS = 5_000;

/** What every transaction on a shared store does besides its body (src/domain/cluster.ts). */
export interface ClusterHooks {
  /**
   * Runs first, when another daemon has committed since this one last looked: `changed` names
   * the tables those transactions wrote, or is null when that is not known (reread them all).
   * `daemons` among them: the daemons' liveness moved (VersionProtocol.livenessMoved), so every
   * cache is brought up to the rows by its delta, and the lines judged again.
   */
  catchUp(changed: ReadonlySet<string> | null, rows?: RowVersions): Tx<void>;
  /** The statements a catch-up of `tables` would send first, for a BEGIN to send ahead (none: []). */
  readAhead(tables: ReadonlySet<string>): readonly Stmt[];
  /**
   * In a batch of row bodies, before them: the mirrors of `tables` brought up to the rows (only
   * tables no row body writes, so none is written while the batch runs).
   */
  freshen(tables: readonly string[]): Tx<void>;
  /** Runs last (not in a batch of row bodies, which leave the lines alone); says whether it wrote anything. */
  flush(): Tx<boolean>;
  /** A transaction failed after flush ran: what it believed written may not be. */
  forget(): void;
  /**
   * Whether a call here is blocked in a stored line: then another daemon's change to the lines
   * is caught up with at once, since it may answer it; else at this daemon's next call. (A
   * change-feed watcher is woken by journalWanted.)
   */
  waiting(): boolean;
  /**
   * Whether a call here watches the change feed: only such a call wants at once what another
   * daemon's transactions recorded, when nothing else they wrote can answer a call here.
   */
  watchingJournal(): boolean;
  /**
   * In the shared order, beside row bodies in flight: wakes the watchers here that a change
   * recorded since they were last shown matches (after its commit). True only when so far
   * behind that a catch-up in the exclusive order should read it instead.
   */
  journalWanted(): Tx<boolean>;
  /**
   * After flush: the other daemons whose blocked calls the transaction may answer: those owning,
   * or having owned, a place in line it wrote or deleted, and those it wrote a grant to. A
   * transaction that changed only this daemon's own places cannot answer a call blocked
   * elsewhere, and one that changed another's answers only there (its NOTIFY names them:
   * VersionProtocol.bump, docs/cluster.md "Who hears a NOTIFY").
   */
  concernedDaemons(): ReadonlySet<string>;
}

/** Where the shared state stands at a transaction's start, as this daemon sees it. */
export interface Opened {
  version: number;
  /** The tables changed since this daemon last looked; null when that is not known (reread them all). */
  changed: ReadonlySet<string> | null;
  /** A catch-up is due though the version did not move (row bodies wrote the journal). */
  due?: boolean;
  /**
   * The row versions (docs/cluster.md, "Catch-up by deltas"): the newest handed out, and the
   * one up to which the keys of deleted rows may have been trimmed.
   */
  rows?: RowVersions;
}

export interface RowVersions {
  ver: number;
  floor: number;
  /**
   * The newest writer's transaction id among the deleted keys trimmed (migration 016): a delta by
   * horizon from at or below it may have lost a key, and reads its table whole.
   */
  xfloor: number;
  /** The journal's newest revision (0: empty), read with them: a catch-up needs no read of its own for it. */
  head: number;
}

/**
 * The cluster version protocol (src/domain/cluster-sync.ts): the statements a shared store's
 * driver sends around every transaction so that a daemon learns what the others committed.
 * The driver owns the round trips; the protocol makes their text and reads their results.
 */
export interface VersionProtocol {
  /** What every transaction does besides its body. */
  readonly hooks: ClusterHooks;
  /**
   * The LISTEN/NOTIFY channel every daemon hears: a transaction in the global order that wrote
   * what may answer a call blocked elsewhere (`answers`) notifies on it.
   */
  readonly channel: string;
  /**
   * The channel of changes recorded and nothing else (row bodies' journal entries, and a
   * transaction in the global order that answers nobody but recorded changes): heard only by
   * a daemon with a change-feed watcher (SharedStore.hearJournal), so the others are not woken.
   */
  readonly journalChannel: string;
  /** A daemon's own channel, which only it hears: what concerns it alone is sent there (bump). */
  ownChannel(daemon: string): string;
  /**
   * The live daemons that hear their own channel (their heartbeat says so; a daemon of an earlier
   * release does not): set at each heartbeat that found them changed.
   */
  hearingOwn: ReadonlySet<string>;
  /** Whether a transaction that wrote these tables may answer a call blocked on another daemon. */
  answers(tables: readonly string[]): boolean;
  /**
   * The tables a NOTIFY's second word names, sent by a transaction in the global order; null
   * for any other word (row bodies' "journal"; none, from a daemon of an earlier release).
   */
  tablesIn(what: string | undefined): string[] | null;
  /**
   * The daemons a NOTIFY's third word names, those whose calls blocked it may answer; null when
   * it names none (it may answer one on any daemon: a daemon of an earlier release names none).
   */
  targetsIn(to: string | undefined): string[] | null;
  /** The version of the shared state this daemon last saw; -1: unknown. */
  seen: number;
  /** Where this daemon stood is not known any more (a reconnect): the next transaction rereads everything. */
  unknown(): void;
  /**
   * The daemons' liveness moved (one came, went or fell silent): the next transaction in the
   * global order catches up, naming `daemons` (ClusterHooks.catchUp), though no version moved.
   */
  livenessMoved(): void;
  /** A transaction failed: memory may be ahead of the rows, so everything is reread. */
  failed(): void;
  /**
   * Row bodies wrote the journal (here, or another daemon said so): they move no version, so the
   * next transaction in the global order catches the journal up anyway.
   */
  journalMoved: boolean;
  /** The text sent as the transaction's first round trip (BEGIN included). */
  beginText(): string;
  /**
   * The same as statements of their own, sent extended, when reads go ahead with them (their
   * results: `opened` reads them as it reads beginText's).
   */
  beginStatements(): readonly { text: string; args: readonly unknown[] }[];
  /**
   * The reads to send behind the next BEGIN in the global order, taken once: what a catch-up
   * of the tables others were seen to write would read first (ClusterHooks.readAhead); [] for none.
   */
  readAhead(): readonly Stmt[];
  /** Another daemon's transaction in the global order wrote these tables (its NOTIFY says so). */
  wrote(tables: readonly string[]): void;
  /**
   * The same for a batch of row bodies, as statements of their own (sent extended, pipelined):
   * BEGIN and the global order, shared; no version read.
   */
  beginRows(): readonly string[];
  /** What that round trip's results say. */
  opened(results: unknown): Opened;
  /** The statement sent with COMMIT when the transaction changed rows, and its values; undefined when nothing changed. */
  bump(written: ReadonlySet<string>, flushed: boolean): { text: string; args: unknown[] } | undefined;
  /** The version that statement moved to. */
  bumped(rows: readonly Record<string, unknown>[]): number;
}

export interface SharedStore {
  /** This daemon's name among those sharing the store, new at every start. */
  readonly daemonId: string;
  /**
   * The database's clock minus this machine's, in ms, measured at every heartbeat: deadlines
   * written by one daemon and acted on by another are read against one clock (the database's),
   * whatever the machines' clocks say.
   */
  readonly clockOffsetMs: number;
  /** From now on every transaction (reads included) runs the protocol and its hooks, in the global order. */
  attach(protocol: VersionProtocol): Promise<void>;
  /**
   * This daemon's turn among the live daemons for `key` (0: first): each live daemon has a
   * different one, in an order that every daemon seeing the same live set agrees on, and that
   * differs from key to key. Who fires a deadline whose own daemon did not (timers.ts).
   */
  turn(key: string): number;
  /**
   * Resolves once this daemon hears the journal's channel (VersionProtocol.journalChannel): a
   * change-feed watcher waits for it before it looks, so every change committed after its look
   * wakes it. It stops hearing it a while after its last watcher left.
   */
  hearJournal(): Promise<void>;
}

/** then() that stays synchronous when the value is: SQLite's path pays no microtask for it. */
export function andThen<T, U>(value: Awaitable<T>, fn: (v: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/** Reports a failure of work nobody awaits, synchronous or not. */
export function detached(run: () => Awaitable<unknown>, onError: (err: unknown) => void): void {
  try {
    const out = run();
    if (out instanceof Promise) out.catch(onError);
  } catch (err) {
    onError(err);
  }
}
