// What a transaction of the PostgreSQL store's driver (driver.ts) is made of, and may end in
// besides its answer: the bodies asked for, their hooks, and the ways a body or a batch fails.
import type { Tx } from "../tx.ts";
import type { Link } from "./connection.ts";
import type { Opened, RowBody } from "../store.ts";

/** A body asked for, and how its caller is answered. */
export interface Job<T = unknown> {
  fn: () => Tx<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
  /** Set for a row body. */
  rows?: RowBody | undefined;
}

/**
 * A transaction begun; a row batch's BEGIN sent, not yet answered (`began`); the reads a
 * catch-up would make sent with the BEGIN, by their text and values (`ahead`: statement.ts).
 */
/** What a body asked to run once its transaction ends: `done` after COMMIT, `orElse` if it did not commit. */
export type Hook = { done: () => void; orElse?: (() => void) | undefined };

export type Begun = Opened & { l: Link; began?: Promise<unknown>; ahead?: Map<string, unknown> };

/** A read beside row bodies that a transaction of this daemon in the global order overlapped. */
export class Overlapped extends Error {}

/** A body's failure that fails its whole transaction, with the hooks it queued. */
export class Failed extends Error {
  constructor(
    readonly reason: unknown,
    readonly hooks: Hook[],
    /** A row body of several, whose failure lets the others run again without it. */
    readonly job?: Job,
  ) {
    super("the transaction failed");
  }
}

/** A held write (runLater) failed: the whole transaction is aborted, whichever body held it. */
export class HeldFailed extends Failed {}
