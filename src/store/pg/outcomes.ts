// What a transaction of the PostgreSQL store's driver (driver.ts) is made of, and may end in
// besides its answer: the bodies asked for, their hooks, and the ways a body or a batch fails.
import { AirlockError } from "../../errors.ts";
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

/**
 * A batch that committed in its flight (last()) although a body failed after its last
 * statement, which last() forbids: nothing is undone or run again (that would apply the others
 * twice); the bodies done are answered, the others told they failed after their commit.
 */
export function answerCommitted(jobs: readonly Job[], done: readonly { job: Job; out: unknown; hooks: Hook[] }[], thrown: unknown, err: unknown): void {
  for (const h of thrown instanceof Failed ? thrown.hooks : []) h.done();
  const failed = new AirlockError("internal", `a call failed after its last statement, and its transaction committed: ${err instanceof Error ? err.message : String(err)}`);
  for (const j of jobs) if (!done.some((d) => d.job === j)) j.reject(failed);
  for (const { job, out, hooks } of done) {
    for (const h of hooks) h.done();
    job.resolve(out);
  }
}
