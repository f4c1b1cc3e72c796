// createKernel wires the primitives together over one store and one clock: the shared
// scheduler and wait queues, and one list of primitives (src/domain/primitive.ts) that the
// start, the cluster's refreshes, an agent's departure and close all iterate. The daemon builds
// one kernel; domain tests build one per test on :memory:.
import type { Awaitable, Store } from "../store/store.ts";
import { pure } from "../store/tx.ts";
import { CallTasks } from "./call-tasks.ts";
import { type Clock, offsetClock, systemClock } from "./clock.ts";
import { createCtx, type Ctx } from "./context.ts";
import { Cluster } from "./cluster.ts";
import { VersionSync } from "./cluster-sync.ts";
import { Counters } from "./counters.ts";
import { WaitGraph } from "./deadlock.ts";
import { Events } from "./events.ts";
import { Journal, type JournalOptions } from "./journal.ts";
import { Lines, LOCAL_DAEMON } from "./lines.ts";
import { Locks } from "./locks.ts";
import { Messages } from "./messages.ts";
import { Notes } from "./notes.ts";
import { claimsAhead } from "./path-rows.ts";
import { rowsAhead } from "./row-versions.ts";
import { Paths } from "./paths.ts";
import { Pools } from "./pools/index.ts";
import { Presence } from "./presence.ts";
import type { Primitive } from "./primitive.ts";
import { Tasks } from "./tasks.ts";
import { Worktrees } from "./worktrees.ts";

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
  /** The stored side of the MCP tasks extension (src/mcp/call-tasks.ts runs the calls). */
  readonly callTasks: CallTasks;
  readonly messages: Messages;
  /** What each agent's checkout holds uncommitted, as its hooks report it. */
  readonly worktrees: Worktrees;
  /** Who waits for whom across locks, slots and path claims. */
  readonly graph: WaitGraph;
  /** Every primitive as the kernel runs it, in the order of every step. */
  readonly primitives: readonly Primitive[];
  /** A shared store: the daemons with a recent heartbeat (this one included); undefined on SQLite. */
  liveDaemons(): Awaitable<ReadonlySet<string>> | undefined;
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
  const callTasks = new CallTasks(ctx, journal);
  const worktrees = new Worktrees(ctx, journal);
  // It asks the others (the list below) who knows an agent, who holds a resource, whose a token is.
  const messages = new Messages(ctx, journal, presence, () => primitives);

  // Every primitive, once: its tables, and what it does at each step. The list's order is every
  // step's order: loaded in turn (the journal last), and a departing agent's locks are released
  // before its tasks are requeued, its slots freed and its path claims dropped. The messages ask
  // in this order too: who knows an agent (presence first, the journal's scan last).
  const primitives: readonly Primitive[] = [
    {
      name: "locks",
      tables: ["locks"],
      load: () => locks.load(),
      refresh: (since) => locks.load(since),
      reads: (since) => rowsAhead("locks", since),
      depart: (a) => locks.releaseAllOf(a),
      waits: locks.waits,
      knows: (a) => locks.knows(a),
      about: { prefix: "lock", holders: (n) => locks.holders(n) },
      handOver: (t, to) => locks.handOver(t, to),
    },
    { name: "notes", tables: ["notes"], load: () => notes.load(), refresh: () => notes.load() },
    { name: "counters", tables: ["counters"] },
    { name: "presence", tables: ["agents"], load: () => presence.load(), refresh: (since) => presence.load(since), reads: (since) => rowsAhead("agents", since), knows: (a) => presence.knows(a) },
    { name: "events", tables: ["events"], waits: events.waits },
    {
      name: "tasks",
      tables: ["tasks"],
      load: () => tasks.load(),
      refresh: (since) => tasks.load(since),
      reads: (since) => rowsAhead("tasks", since),
      depart: (a) => tasks.requeueClaimsOf(a),
      waits: tasks.waits,
      knows: (a) => tasks.knows(a),
      about: { prefix: "task", holders: (id) => tasks.holders(id) },
    },
    {
      name: "pools",
      // An offer's state lives in the lines, which the cluster reloads from `waiters`; `hosts`
      // is the machines' heartbeats, read afresh by the host watch.
      tables: ["pools", "slots", "waiters", "hosts"],
      load: () => pools.load(shared !== undefined),
      refresh: (since) => pools.refresh(since),
      reads: (since) => rowsAhead("slots", since),
      depart: (a) => pools.releaseAllOf(a),
      waits: pools.waits,
      knows: (a) => pools.knows(a),
      about: { prefix: "pool", holders: (n) => pools.holders(n) },
      handOver: (t, to) => pools.handOver(t, to),
    },
    {
      name: "paths",
      // airlock_gone: the keys of deleted claims, for a catch-up by deltas (a shared store's only).
      tables: ["path_claims", "fences", "airlock_gone"],
      load: () => paths.load(),
      refresh: (since) => paths.refresh(since),
      reads: (since) => claimsAhead(since),
      depart: (a, reason) => paths.releaseAllOf(a, reason === "lapsed" ? "presence lapsed" : "agent unregistered"),
      waits: paths.waits,
      knows: (a) => paths.moves.knows(a),
      about: { prefix: "path", holders: (n) => paths.moves.holders(n) },
      handOver: (t, to) => paths.moves.handOver(t, to),
    },
    // Read afresh at every step (tasks/get on any daemon); its drops are armed by the MCP layer's start.
    { name: "call-tasks", tables: ["call_tasks"] },
    // Nothing in memory to refresh (a blocked read is in the lines); an away agent keeps its inbox.
    { name: "messages", tables: ["messages", "message_recipients"], load: () => messages.load(), waits: messages.waits, knows: (a) => messages.knows(a) },
    // The touched paths are indexed in memory (check_paths' edited_by): caught up by deltas by
    // horizon, since row bodies write the reports that change something too.
    {
      name: "worktrees",
      tables: ["worktrees", "airlock_gone"],
      load: () => worktrees.load(),
      horizon: worktrees,
      depart: (a, reason) => worktrees.depart(a, reason),
      knows: (a) => worktrees.knows(a),
    },
    // Caught up by the cluster itself, after every refresh: it reads only the records that are new.
    { name: "journal", tables: ["journal"], load: () => journal.load(), waits: journal.waits, knows: (a) => journal.mentionsAgentTx(a) },
  ];

  presence.onDeparture(function* (agentId, reason) {
    for (const p of primitives) if (p.depart) yield* p.depart(agentId, reason);
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
    for (const p of primitives) if (p.load) yield* p.load();
  });
  // Other daemons may share the store: from here on every transaction starts by catching up
  // with what they committed (the lines included) and ends by writing down its own changes.
  let cluster: Cluster | undefined;
  if (shared) {
    const refreshers = primitives.filter((p) => p.refresh || p.horizon);
    const c = (cluster = new Cluster(shared.daemonId, ctx.queues, lines, journal, refreshers));
    const sync = new VersionSync(c, shared.daemonId);
    c.seen = () => sync.seen; // what freshen reads changes since (cluster.ts)
    c.livenessMoved = () => sync.livenessPending;
    ctx.linesCurrent = () => c.linesCurrent(); // reads of the lines beside row bodies (ctx.readLines)
    await shared.attach(sync);
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
    callTasks,
    messages,
    worktrees,
    graph,
    primitives,
    liveDaemons() {
      const c = cluster;
      // Heartbeat rows, which no daemon mirrors: read beside row bodies, stopping none.
      return c ? ctx.rowRead("daemons", "", () => c.liveDaemonIds()) : undefined;
    },
    close() {
      lines.close(); // the lines stay stored as they are: emptying the queues below is no departure
      ctx.scheduler.stop();
      for (const p of primitives) p.waits?.clear();
    },
  };
}
