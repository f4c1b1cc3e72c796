// What the domain needs from a store, whichever it is: SQLite's embedded file (db.ts, answers
// every statement at once, so a transaction returns its result synchronously) or a shared
// PostgreSQL database (pg.ts, answers after a round trip, so a transaction returns a promise).
// The domain's transactions are generator bodies (tx.ts) and run unchanged on both.
import type { Durability } from "../config/settings.ts";
import type { Tx } from "./tx.ts";

export type Awaitable<T> = T | Promise<T>;

export type StoreKind = "sqlite" | "postgres";

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
  tx<T>(fn: () => Tx<T>): Awaitable<T>;
  /** Runs a body outside any transaction (a read), in turn with transactions. */
  read<T>(body: Tx<T>): Awaitable<T>;
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
   */
  catchUp(changed: ReadonlySet<string> | null): Tx<void>;
  /** Runs last; says whether it wrote anything. */
  flush(): Tx<boolean>;
  /** A transaction failed after flush ran: what it believed written may not be. */
  forget(): void;
  /**
   * Whether a call here is blocked (a waiter, a change-feed watcher): then another daemon's
   * change is caught up with at once, since it may answer it; else at this daemon's next call.
   */
  waiting(): boolean;
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
  /** From now on every transaction (reads included) runs the hooks, in the global order. */
  attach(hooks: ClusterHooks): Promise<void>;
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
