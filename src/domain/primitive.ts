// A primitive as the kernel runs it. createKernel declares each one once, in one list, and every
// step (the start, another daemon's change, an agent's departure, the shutdown) iterates that
// list in its order: a new primitive is one entry, and none of its steps can be left out.
import { AirlockError } from "../errors.ts";
import type { Read, Stmt, Tx } from "../store/tx.ts";
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
  /**
   * A shared store: memory brought up to the rows other daemons wrote. None: it keeps nothing.
   * `since`: every change up to this row version is applied already, so the rows and deleted
   * keys above it are all that changed, for a table that carries row versions (docs/cluster.md,
   * "Catch-up by deltas"); null: read it whole.
   */
  refresh?(since: number | null): Tx<unknown>;
  /**
   * The statements refresh(since) sends first, none needing another's answer: a shared store's
   * BEGIN sends them ahead when another daemon wrote its tables, and the refresh finds them
   * answered (docs/cluster.md, "Deltas read with the BEGIN"). None: its refresh reads in turn.
   */
  reads?(since: number): readonly Stmt[];
  /**
   * Instead of refresh and reads, for a table row bodies write (a shared store): its delta by
   * horizon (mirror.ts, horizonReads). `reads(since)`: the statements, none needing another's
   * answer (since: the horizon the last delta reached; null: whole); `apply` brings memory up to
   * their answers and answers the horizon the next delta starts from.
   */
  readonly horizon?: Horizon;
  /** Inside the transaction in which an agent departs: what the agent held goes (what it reports is not used). */
  depart?(agentId: string, reason: DepartureReason): Tx<unknown>;
  /** Its blocked calls, answered (as aborted) at close. */
  readonly waits?: { clear(): void };
  /**
   * Whether it holds, awaits or keeps a record of anything of this agent (within its retention):
   * what the messages call "seen" (src/domain/messages.ts), the guard against a mistyped recipient.
   */
  knows?(agentId: string): Tx<boolean>;
  /** The `about` resources it answers for (send_message): `prefix:NAME`, and who holds NAME now. */
  readonly about?: { readonly prefix: string; holders(name: string): Tx<string[]> };
  /**
   * hand_over: moves what this token holds to toAgent with a new token and a higher fence, in the
   * running transaction (the old token stops working). Null: not a token of this primitive's.
   */
  handOver?(token: string, toAgent: string): Tx<HandedOver | null>;
}

/** What a hand-over moved, as the primitive that held it reports it. */
export interface HandedOver {
  /** The resource as send_message's `about` names it: `lock:NAME`, `pool:NAME`, `path:ROOM:PATTERNS`. */
  about: string;
  /** The agent that held it. */
  from: string;
  token: string;
  fence: number;
}

/** The tables of the schemas no primitive reads, and whose they are. */
export const UNOWNED_TABLES: Readonly<Record<string, string>> = {
  airlock_sync: "the shared store's version, bumped by every writing transaction (store/pg.ts)",
  airlock_changes: "which tables each version changed: what decides which refresh runs (store/pg.ts)",
  daemons: "each daemon's heartbeat, written by the store and read by the cluster (cluster.ts)",
  grants: "grants to other daemons' waiters, the cluster's to write and answer (cluster.ts)",
  ui_sessions: "the dashboard's login sessions, read afresh by the HTTP layer at each request",
};

/** A primitive's handOver, before it moves anything: handing to the holder itself is a mistake. */
export function refuseOwnHandOver(holder: string, toAgent: string, about: string): void {
  if (holder === toAgent) throw new AirlockError("invalid_argument", `to_agent: ${JSON.stringify(toAgent)} already holds ${about}; nothing was handed over`);
}

/** A mirror caught up by deltas by horizon (Primitive.horizon). */
export interface Horizon {
  reads(since: number | null): readonly Read<unknown[]>[];
  apply(answers: readonly unknown[], since: number | null): Tx<number>;
}
