// The bodies of a batch of row bodies on the PostgreSQL store, run side by side (driver.ts runs
// the batch; docs/cluster.md, "Scaling out" and "A row batch in one flight").
import type { Link } from "./connection.ts";
import { Failed, HeldFailed, type Hook, type Job } from "./outcomes.ts";
import { heldFailure, type Run } from "./statement.ts";

/**
 * Each body is started in key order and its statements are sent as it yields them (`drive`), so
 * the server receives them pipelined and runs them in the order sent (each body's first
 * statement, which locks its row, comes in key order). None touches memory, so interleaving
 * them is safe. When one fails, the first to fail is the culprit (a statement error makes the
 * others' later statements fail too): thrown once all have settled, so the batch rolls back and
 * the others run again without it. Those that ended are in `done`.
 */
export async function sideBySide(
  l: Link,
  run: Run,
  jobs: readonly Job[],
  done: { job: Job; out: unknown; hooks: Hook[] }[],
  drive: (job: Job, hooks: Hook[]) => Promise<unknown>,
): Promise<void> {
  let first: Failed | undefined;
  await Promise.all(
    jobs.map(async (job) => {
      const hooks: Hook[] = [];
      try {
        done.push({ job, out: await drive(job, hooks), hooks });
      } catch (err) {
        if (first) first.hooks.push(...hooks);
        else first = new Failed(err, hooks, l.lost ? undefined : job);
      }
    }),
  );
  if (first) {
    const held = l.lost ? null : await heldFailure(run.held);
    throw held ? new HeldFailed(held.err, first.hooks) : first;
  }
}
