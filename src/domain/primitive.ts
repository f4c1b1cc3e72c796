// A primitive as the kernel runs it. createKernel declares each one once, in one list, and every
// step (the start, another daemon's change, an agent's departure, the shutdown) iterates that
// list in its order: a new primitive is one entry, and none of its steps can be left out.
import type { Tx } from "../store/tx.ts";
import type { DepartureReason } from "./presence.ts";

export interface Primitive {
  /** Its name, which is also its source: src/domain/<name>.ts, or the folder src/domain/<name>/. */
  readonly name: string;
  /**
   * Every table it reads. On a shared store another daemon's write to any of them runs its
   * refresh, so a table it reads but leaves out here would leave its memory stale: a test
   * (test/domain/primitives.test.ts) fails when its SQL names a table not listed here, or when a
   * table of either schema is neither some primitive's nor in UNOWNED_TABLES.
   */
  readonly tables: readonly string[];
  /** At start, before any call: the stored state loaded (timers armed, lines rebuilt). */
  load?(): Tx<void>;
  /** A shared store: memory brought up to the rows other daemons wrote. None: it keeps nothing. */
  refresh?(): Tx<void>;
  /** Inside the transaction in which an agent departs: what the agent held goes (what it reports is not used). */
  depart?(agentId: string, reason: DepartureReason): Tx<unknown>;
  /** Its blocked calls, answered (as aborted) at close. */
  readonly waits?: { clear(): void };
}

/** The tables of the schemas no primitive reads, and whose they are. */
export const UNOWNED_TABLES: Readonly<Record<string, string>> = {
  airlock_sync: "the shared store's version, bumped by every writing transaction (store/pg.ts)",
  airlock_changes: "which tables each version changed: what decides which refresh runs (store/pg.ts)",
  daemons: "each daemon's heartbeat, written by the store and read by the cluster (cluster.ts)",
  grants: "grants to other daemons' waiters, the cluster's to write and answer (cluster.ts)",
  ui_sessions: "the dashboard's login sessions, read afresh by the HTTP layer at each request",
};
