// createKernel wires the primitives together over one store and one clock: the shared
// scheduler and wait queues, and the departure hooks that make a dead agent release what it
// holds. The daemon builds one kernel; domain tests build one per test on :memory:.
import type { Store } from "../store/store.ts";
import { pure } from "../store/tx.ts";
import { type Clock, offsetClock, systemClock } from "./clock.ts";
import { createCtx, type Ctx } from "./context.ts";
import { Cluster } from "./cluster.ts";
import { Counters } from "./counters.ts";
import { WaitGraph } from "./deadlock.ts";
import { Events } from "./events.ts";
import { Journal, type JournalOptions } from "./journal.ts";
import { Lines, LOCAL_DAEMON } from "./lines.ts";
import { Locks } from "./locks.ts";
import { Notes } from "./notes.ts";
import { Paths } from "./paths.ts";
import { Pools } from "./pools/index.ts";
import { Presence } from "./presence.ts";
import { Tasks } from "./tasks.ts";

export interface Kernel {
  readonly ctx: Ctx;
  readonly store: Store;
  readonly clock: Clock;
  readonly locks: Locks;
  readonly notes: Notes;
  readonly counters: Counters;
  readonly presence: Presence;
  readonly events: Events;
  readonly tasks: Tasks;
  readonly journal: Journal;
  readonly pools: Pools;
  readonly paths: Paths;
  /** Who waits for whom across locks, slots and path claims. */
  readonly graph: WaitGraph;
  /** Stops every timer and answers every blocked call; the store stays open. */
  close(): void;
}

export interface KernelOptions {
  store: Store;
  clock?: Clock;
  journal?: JournalOptions;
  /** A shared store: how long a machine may have no live daemon before its bound slots go. */
  hostGoneMs?: number;
}

export async function createKernel(opts: KernelOptions): Promise<Kernel> {
  const shared = opts.store.shared;
  // Daemons sharing a store read every deadline against one clock: the database's.
  const clock = opts.clock ?? (shared ? offsetClock(() => shared.clockOffsetMs) : systemClock);
  const ctx = createCtx(opts.store, clock);
  // Every primitive records its changes here, inside the transaction that makes them.
  const journal = new Journal(ctx, opts.journal);
  const graph = new WaitGraph();
  const locks = new Locks(ctx, journal, graph);
  const notes = new Notes(ctx, journal);
  const counters = new Counters(ctx, journal);
  const presence = new Presence(ctx, journal);
  const events = new Events(ctx, journal);
  const tasks = new Tasks(ctx, journal);
  const pools = new Pools(ctx, journal, graph, opts.hostGoneMs);
  const paths = new Paths(ctx, journal, presence, graph);

  presence.onDeparture(function* (agentId, reason) {
    yield* locks.releaseAllOf(agentId);
    yield* tasks.requeueClaimsOf(agentId);
    yield* pools.releaseAllOf(agentId);
    yield* paths.releaseAllOf(agentId, reason === "lapsed" ? "presence lapsed" : "agent unregistered");
  });

  // The waiter lines' one stored form (lines.ts): every transaction that changed them ends by
  // writing them down (a shared store's flush does it there; SQLite's store runs it itself).
  const lines = new Lines(shared?.daemonId ?? LOCAL_DAEMON, ctx.queues, shared !== undefined, opts.store.afterCommit);
  if (!shared) opts.store.finishWith?.(() => (lines.pending() ? lines.flush() : null));

  // The stored state is loaded (timers armed, lines rebuilt) with the store's own tx, not the
  // context's: that would first run whatever fell due while the daemon was down (a lapsed
  // heartbeat, say) before every primitive is loaded.
  await opts.store.tx(function* () {
    // SQLite: the lines first (every place detached), then each primitive arms its timers for them.
    if (!shared) yield* lines.load();
    yield* locks.load();
    yield* notes.load();
    yield* presence.load();
    yield* tasks.load();
    yield* pools.load(shared !== undefined);
    yield* paths.load();
    yield* journal.load();
  });
  // Other daemons may share the store: from here on every transaction starts by catching up
  // with what they committed (the lines included) and ends by writing down its own changes.
  if (shared) {
    // What each primitive keeps from which tables (an offer's state lives in the lines).
    const cluster = new Cluster(shared.daemonId, ctx.queues, lines, journal, [
      { tables: ["locks"], refresh: () => locks.load() },
      { tables: ["notes"], refresh: () => notes.load() },
      { tables: ["agents"], refresh: () => presence.load() },
      { tables: ["tasks"], refresh: () => tasks.load() },
      { tables: ["pools", "slots", "waiters"], refresh: () => pools.refresh() },
      { tables: ["path_claims"], refresh: () => paths.refresh() },
    ]);
    await shared.attach({
      catchUp: (changed) => cluster.catchUp(changed),
      flush: () => cluster.flush(),
      forget: () => cluster.forget(),
      waiting: () => cluster.waiting(),
    });
  }
  // Expiries that fell due while the daemon was down are processed now, before any call.
  await ctx.read(() => pure(undefined));

  return {
    ctx,
    store: opts.store,
    clock,
    locks,
    notes,
    counters,
    presence,
    events,
    tasks,
    journal,
    pools,
    paths,
    graph,
    close() {
      lines.close(); // the lines stay stored as they are: emptying the queues below is no departure
      ctx.scheduler.stop();
      locks.waits.clear();
      events.waits.clear();
      tasks.waits.clear();
      pools.waits.clear();
      paths.waits.clear();
      journal.waits.clear();
    },
  };
}
