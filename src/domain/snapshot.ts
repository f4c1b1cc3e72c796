// One view of everything, for `airlock status` and `airlock watch`. The daemon answers it with
// live waiter queues; when the daemon is down the CLI builds it from the database alone
// (read-only), so the two paths share this one function. Path claims come without their
// tokens: whoever can read the status must not be able to release someone else's claim.
import { type Awaitable, DEAD_AFTER_MS } from "../store/store.ts";
import { all, gather, get, type Read, reading, type Tx } from "../store/tx.ts";
import { secondsSince, secondsUntil } from "./context.ts";
import type { CycleStep, Deadlock, Wait, WaitKind, WouldDeadlock } from "./deadlock.ts";
import { type JournalEntry, type JournalRow, toEntry } from "./journal-read.ts";
import type { Kernel } from "./kernel.ts";
import type { Holder, Queued } from "./pools/index.ts";

export interface Snapshot {
  source: "daemon" | "database";
  /** The journal's newest revision when the snapshot was taken: follow the feed from here. */
  revision: number;
  locks: {
    name: string;
    agent_id: string;
    expires_in_seconds: number;
    held_seconds: number;
    fence: number;
    queue_depth: number;
    /** task: the waiter is a call task's (the MCP tasks extension, docs/tasks.md). */
    waiters: { agent_id: string; waiting_seconds: number; blocked: boolean; task?: true }[];
  }[];
  agents: SnapshotAgent[];
  queues: { queue: string; pending: number; claimed: number; done: number; failed: number; waiters: number }[];
  events: { name: string; generation: number; waiters: number }[];
  notes: number;
  counters: { name: string; value: number }[];
  pools: SnapshotPool[];
  /** Live path claims, grouped by room (rooms in name order). Never their tokens: a token releases. */
  claims: SnapshotRoomClaims[];
  /** Who waits for whom across locks, lock groups, slots and path claims; any cycle in it. */
  graph: WaitGraphView;
  /** The newest journal entries (at most JOURNAL_TAIL), oldest first, as watch_changes shows them. */
  journal: ChangeView[];
  /** A shared store: how many daemons (machines' and this one) have a live heartbeat. */
  daemons?: number;
  /**
   * Per agent with unread messages or a read_messages call blocked now (live only): how many of
   * each. Never a message's subject or body.
   */
  inboxes?: { agent_id: string; unread: number; reading: number }[];
  /** What each agent's checkout holds uncommitted, as reported (report_worktree), by room then agent. */
  worktrees?: SnapshotWorktree[];
}

export interface SnapshotWorktree {
  room: string;
  agent_id: string;
  branch?: string;
  head?: string;
  dirty_count: number;
  /** Its own edits, still uncommitted. */
  touched: string[];
  reported_seconds: number;
}

export interface SnapshotAgent {
  agent_id: string;
  expires_in_seconds: number;
  role?: string;
  locks: string[];
  tasks: number[];
  slots: { pool: string; weight: number }[];
  claims: { room: string; paths: string[] }[];
  /** What it stands in line for, and who is in its way. */
  waiting_for: { kind: WaitKind; resource: string; blocked_by: string[]; blocked: boolean }[];
}

/** One edge of the wait-for graph: agent_id waits for waits_for, who holds (or is ahead in line for) resource. */
export interface WaitEdgeView {
  agent_id: string;
  waits_for: string;
  resource: string;
  kind: WaitKind;
  /** The waiter's call is blocked right now (else it keeps its place between calls). */
  blocked: boolean;
}

/**
 * The wait-for graph, with its cycles sorted into the two kinds every screen shows apart. A
 * cycle's steps are in order; the last step's waits_for is the first step's agent_id.
 */
export interface WaitGraphView {
  edges: WaitEdgeView[];
  /**
   * Deadlocks as the daemon means them (and answers a caller that closes one): every agent in
   * the cycle is blocked right now. Same shape as a refused call's `deadlock`.
   */
  deadlocks: { cycle: CycleStep[] }[];
  /**
   * Cycles that would deadlock if the agents in between_calls blocked: each of them keeps its
   * place between calls, so the daemon has answered nobody yet. The cycle starts with the first.
   */
  would_deadlock: { cycle: CycleStep[]; between_calls: string[] }[];
}

/** One journal entry as the feed shows it: `at` is ISO 8601 (UTC), the kind's own fields flattened in. */
export type ChangeView = { revision: number; at: string; kind: string; resource: string; agent_id?: string; reason?: string } & Record<string, unknown>;

export interface SnapshotRoomClaims {
  room: string;
  claims: { agent_id: string; paths: string[]; reason?: string; fence: number; expires_in_seconds: number }[];
}

export interface SnapshotPool {
  pool: string;
  capacity: number;
  in_use: number;
  offered: number;
  queued: number;
  version: number;
  offer_seconds: number;
  holders: { agent_id: string; reason?: string; weight: number; held_seconds: number; pid?: number }[];
  waiters: {
    agent_id: string;
    reason?: string;
    weight: number;
    waiting_seconds: number;
    state: "queued" | "offered" | "paused";
    blocked: boolean;
    offer_expires_in_seconds?: number;
    /** The request is a call task's (the MCP tasks extension, docs/tasks.md). */
    task?: true;
  }[];
}

/** How many of the newest journal entries a snapshot carries. */
export const JOURNAL_TAIL = 50;

type WaiterInfo = { agentId: string; attached: boolean; since: number; token: string };

/**
 * The snapshot, as a body: the daemon runs it with its live kernel (ctx.read), the CLI with the
 * database alone (store.read on a read-only store).
 */
export function* buildSnapshot(now: number, live?: Kernel): Tx<Snapshot> {
  return (yield* snapshotBody(now, live, false))!;
}

/**
 * The snapshot's body. `beside` (a shared store, in the shared order, with this daemon's lines
 * the stored ones): the journal's tail is read up to its settled revision (Journal.settledTail),
 * and null says the exclusive order must read it instead. Otherwise (the global order, or
 * SQLite, or a stopped daemon's database) nothing is in flight, and the tail is the newest rows.
 */
function* snapshotBody(now: number, live: Kernel | undefined, beside: boolean): Tx<Snapshot | null> {
  const lockWaiters = (name: string): WaiterInfo[] =>
    live ? live.locks.waits.line(name).map((w) => ({ agentId: w.req.agentId, attached: w.attached, since: w.since, token: w.token })) : [];
  // The tables a database may lack. A live daemon migrated its store, so every one is there
  // (`daemons` only on a shared store) and it asks the catalogue nothing (on PostgreSQL each
  // question is a round trip to information_schema); a stopped daemon's database, opened
  // read-only, may predate some of them.
  const there = new Set<string>();
  for (const t of TABLES_MAYBE_ABSENT) if (live ? t !== "daemons" || live.ctx.store.shared !== undefined : yield* hasTable(t)) there.add(t);
  const ifThere = <R>(table: (typeof TABLES_MAYBE_ABSENT)[number], r: Read<R[]>): Read<R[]> => (there.has(table) ? r : reading.all<R>(NO_ROWS));
  // Every read that needs no other's answer, together: on PostgreSQL one round trip's wait, not
  // one each, while the snapshot holds its place in the order (a dashboard asks again at every
  // burst of changes).
  const [taskPlaceRows, daemonRows, lockRows, agentRows, claimedRows, queueRows, eventRows, noteRows, counters, journalRows, unread, worktreeRows, claimRows] = yield* gather(
    // The places call tasks wait in (any daemon's, on a shared store): marked as tasks.
    ifThere<{ wake_token: string | null }>("call_tasks", reading.all("SELECT wake_token FROM call_tasks WHERE status = 'working'")),
    // Only a shared store has daemons to count (and its clock is the database's).
    ifThere<{ n: number }>("daemons", reading.all("SELECT COUNT(*) AS n FROM daemons WHERE seen_at >= ?", now - DEAD_AFTER_MS)),
    reading.all<{ name: string; agent_id: string; fence: number; acquired_at: number; expires_at: number }>(
      "SELECT name, agent_id, fence, acquired_at, expires_at FROM locks WHERE expires_at > ? ORDER BY name",
      now,
    ),
    reading.all<{ agent_id: string; expires_at: number; role: string | null }>("SELECT agent_id, expires_at, role FROM agents WHERE expires_at > ? ORDER BY agent_id", now),
    // Every claimed task at once, not a read per agent.
    reading.all<{ id: number; lease_agent: string }>("SELECT id, lease_agent FROM tasks WHERE state = 'claimed' AND lease_agent IS NOT NULL ORDER BY id"),
    reading.all<{ queue: string; state: "pending" | "claimed" | "done" | "failed"; n: number }>("SELECT queue, state, COUNT(*) AS n FROM tasks GROUP BY queue, state ORDER BY queue"),
    reading.all<{ name: string; generation: number }>("SELECT name, generation FROM events ORDER BY name"),
    reading.all<{ n: number }>("SELECT COUNT(*) AS n FROM notes WHERE expires_at IS NULL OR expires_at > ?", now),
    reading.all<{ name: string; value: number }>("SELECT name, value FROM counters ORDER BY name"),
    beside ? reading.all<JournalRow>(NO_ROWS) : ifThere<JournalRow>("journal", reading.all("SELECT * FROM (SELECT * FROM journal ORDER BY revision DESC LIMIT ?) AS tail ORDER BY revision", JOURNAL_TAIL)),
    ifThere<{ agent_id: string; n: number }>("message_recipients", reading.all("SELECT agent_id, COUNT(*) AS n FROM message_recipients WHERE read_at IS NULL GROUP BY agent_id")),
    ifThere<WorktreeRow>("worktrees", reading.all("SELECT room, agent_id, branch, head, dirty, touched, reported_at FROM worktrees WHERE expires_at > ? ORDER BY room, agent_id", now)),
    // The live claims, as list_path_claims orders them (a stopped daemon's timer is not
    // deleting lapsed ones, so the expiry is read, not assumed).
    ifThere<ClaimRow>("path_claims", reading.all("SELECT room, agent_id, paths, reason, fence, expires_at FROM path_claims WHERE expires_at > ? ORDER BY acquired_at, room, fence", now)),
  );
  const taskPlaces = new Set(taskPlaceRows.flatMap((r) => (r.wake_token ? [r.wake_token] : [])));
  // Beside row bodies, a revision may be taken and not committed yet: the tail stops before it.
  const tail = beside ? yield* live!.journal.settledTail(JOURNAL_TAIL) : { entries: journalRows.map(toEntry), revision: undefined };
  if (!tail) return null;
  // In the global order every revision up to the newest is settled (a gap there is for good).
  if (!beside && live && journalRows.length > 0) live.journal.settledUpTo(journalRows.at(-1)!.revision);

  // Before the agents: each agent row lists its slots, claims and waits.
  const pools = live ? yield* livePools(live, now, taskPlaces) : yield* storedPools(now);
  const claims = byRoom(claimRows, now);
  const graph = live ? yield* live.graph.view() : { waits: [], deadlocks: [], wouldDeadlock: [] };
  const daemons = there.has("daemons") ? Number(daemonRows[0]?.n ?? 0) : undefined;

  const locks = lockRows.map((l) => {
    const waiters = lockWaiters(l.name);
    return {
      name: l.name,
      agent_id: l.agent_id,
      expires_in_seconds: secondsUntil(l.expires_at, now),
      held_seconds: secondsSince(l.acquired_at, now),
      fence: l.fence,
      queue_depth: waiters.length,
      waiters: waiters.map((w) => ({ agent_id: w.agentId, waiting_seconds: secondsSince(w.since, now), blocked: w.attached, ...(taskPlaces.has(w.token) ? { task: true as const } : {}) })),
    };
  });

  // What each agent holds and waits for, gathered in one pass over each list (in the lists'
  // order), not by a filter of every list per agent: a team of 1,500 agents with a lock and a
  // claim each made that millions of steps a snapshot, and a dashboard asks for one at every
  // burst of changes (bench/status-tail.ts).
  const add = <T>(m: Map<string, T[]>, agent: string, value: T) => {
    const list = m.get(agent);
    if (list) list.push(value);
    else m.set(agent, [value]);
  };
  const locksOf = new Map<string, string[]>();
  for (const l of locks) add(locksOf, l.agent_id, l.name);
  const tasksOf = new Map<string, number[]>();
  for (const t of claimedRows) add(tasksOf, t.lease_agent, t.id);
  const slotsOf = new Map<string, SnapshotAgent["slots"]>();
  for (const p of pools) for (const h of p.holders) add(slotsOf, h.agent_id, { pool: p.pool, weight: h.weight });
  const claimsOf = new Map<string, SnapshotAgent["claims"]>();
  for (const r of claims) for (const c of r.claims) add(claimsOf, c.agent_id, { room: r.room, paths: c.paths });
  const waitsOf = new Map<string, SnapshotAgent["waiting_for"]>();
  for (const w of graph.waits) {
    add(waitsOf, w.agentId, { kind: w.kind, resource: w.resource, blocked_by: [...new Set(w.edges.map((e) => e.waitsFor))], blocked: w.blocked });
  }
  const agents: SnapshotAgent[] = agentRows.map((a) => ({
    agent_id: a.agent_id,
    expires_in_seconds: secondsUntil(a.expires_at, now),
    ...(a.role ? { role: a.role } : {}),
    locks: locksOf.get(a.agent_id) ?? [],
    tasks: tasksOf.get(a.agent_id) ?? [],
    slots: slotsOf.get(a.agent_id) ?? [],
    claims: claimsOf.get(a.agent_id) ?? [],
    waiting_for: waitsOf.get(a.agent_id) ?? [],
  }));

  const queues = new Map<string, Snapshot["queues"][number]>();
  for (const r of queueRows) {
    let e = queues.get(r.queue);
    if (!e) queues.set(r.queue, (e = { queue: r.queue, pending: 0, claimed: 0, done: 0, failed: 0, waiters: live?.tasks.waits.line(r.queue).length ?? 0 }));
    e[r.state] = r.n;
  }

  const events = eventRows.map((e) => ({ ...e, waiters: live?.events.waits.line(e.name).length ?? 0 }));
  const notes = noteRows[0]!.n;

  const journal = tail.entries.map(changeView);
  const revision = tail.revision ?? journal.at(-1)?.revision ?? 0;
  const readers = live ? [...live.messages.waits.keys()] : [];
  const unreadOf = new Map(unread.map((r) => [r.agent_id, r.n]));
  const inboxes = [...new Set([...unreadOf.keys(), ...readers])].sort().map((agent_id) => ({
    agent_id,
    unread: unreadOf.get(agent_id) ?? 0,
    reading: live?.messages.waits.line(agent_id).length ?? 0,
  }));

  return {
    source: live ? "daemon" : "database",
    revision,
    locks,
    agents,
    queues: [...queues.values()],
    events,
    notes,
    counters,
    pools,
    claims,
    graph: graphView(graph),
    journal,
    ...(daemons === undefined ? {} : { daemons }),
    inboxes,
    worktrees: worktreeRows.map((r) => worktreeView(r, now)),
  };
}

/** The edges of the wait-for graph, one per (waiter, blocker, resource), and its cycles of both kinds. */
function graphView(g: { waits: Wait[]; deadlocks: Deadlock[]; wouldDeadlock: WouldDeadlock[] }): WaitGraphView {
  const edges = g.waits.flatMap((w) => w.edges.map((e) => ({ agent_id: w.agentId, waits_for: e.waitsFor, resource: e.resource, kind: w.kind, blocked: w.blocked })));
  return {
    edges,
    deadlocks: g.deadlocks.map((d) => ({ cycle: d.cycle })),
    would_deadlock: g.wouldDeadlock.map((c) => ({ cycle: c.cycle, between_calls: c.betweenCalls })),
  };
}

/** The tables a database an older daemon wrote may lack (opened read-only, it is not migrated). */
const TABLES_MAYBE_ABSENT = ["call_tasks", "daemons", "journal", "message_recipients", "worktrees", "path_claims"] as const;
/** A gathered read in place of one of a table that is not there. */
const NO_ROWS = "SELECT 1 AS none WHERE 1 = 0";

function* hasTable(name: string): Tx<boolean> {
  return (yield* get("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name)) !== null;
}

type WorktreeRow = { room: string; agent_id: string; branch: string | null; head: string | null; dirty: string; touched: string; reported_at: number };
type ClaimRow = { room: string; agent_id: string; paths: string; reason: string | null; fence: number; expires_at: number };

/** A live report, as read from its row (the daemon's and a stopped daemon's database alike). */
function worktreeView(r: WorktreeRow, now: number): SnapshotWorktree {
  return {
    room: r.room,
    agent_id: r.agent_id,
    ...opt("branch", r.branch),
    ...opt("head", r.head),
    dirty_count: (JSON.parse(r.dirty) as string[]).length,
    touched: Object.keys(JSON.parse(r.touched) as Record<string, number>),
    reported_seconds: secondsSince(r.reported_at, now),
  };
}

/** Oldest claim first within a room, as list_path_claims gives them. */
function byRoom(claims: readonly ClaimRow[], now: number): SnapshotRoomClaims[] {
  const rooms = new Map<string, SnapshotRoomClaims>();
  for (const c of claims) {
    let r = rooms.get(c.room);
    if (!r) rooms.set(c.room, (r = { room: c.room, claims: [] }));
    r.claims.push({ agent_id: c.agent_id, paths: JSON.parse(c.paths) as string[], ...opt("reason", c.reason), fence: c.fence, expires_in_seconds: secondsUntil(c.expires_at, now) });
  }
  return [...rooms.values()].sort((a, b) => (a.room < b.room ? -1 : a.room > b.room ? 1 : 0));
}

const opt = <K extends string, V>(k: K, v: V | null | undefined) => (v === null || v === undefined ? {} : ({ [k]: v } as Record<K, V>));

/** One change as the feed shows it: `at` is an ISO 8601 string (UTC); the kind's fields are flattened in. */
export function changeView(e: JournalEntry): ChangeView {
  return {
    ...e.data,
    revision: e.revision,
    at: new Date(e.at).toISOString(),
    kind: e.kind,
    resource: e.resource,
    ...(e.agentId !== undefined ? { agent_id: e.agentId } : {}),
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
  };
}

/** A holder of a slot, as status and the pool tools show it. */
export function holderWire(h: Holder): SnapshotPool["holders"][number] {
  return { agent_id: h.agentId, ...opt("reason", h.reason), weight: h.weight, held_seconds: h.heldSeconds, ...opt("pid", h.pid) };
}

/** A request in a pool's line, as status and the pool tools show it. */
export function queuedWire(w: Queued, now: number): SnapshotPool["waiters"][number] {
  return {
    agent_id: w.agentId,
    ...opt("reason", w.reason),
    weight: w.weight,
    waiting_seconds: w.waitingSeconds,
    state: w.state,
    blocked: w.blocked,
    ...opt("offer_expires_in_seconds", w.offerExpiresAt === undefined ? undefined : secondsUntil(w.offerExpiresAt, now)),
  };
}

/** Every pool, with holders and the line: what list_pools answers and status shows. */
export function* livePools(k: Kernel, now: number, taskPlaces: ReadonlySet<string> = new Set()): Tx<SnapshotPool[]> {
  return (yield* k.pools.listTx()).map((p) => ({
    pool: p.pool,
    capacity: p.capacity,
    in_use: p.inUse,
    offered: p.offered,
    queued: p.queued,
    version: p.version,
    offer_seconds: p.offerSeconds,
    holders: p.holders.map(holderWire),
    waiters: p.waiters.map((w) => ({ ...queuedWire(w, now), ...(taskPlaces.has(w.token) ? { task: true as const } : {}) })),
  }));
}

/** The daemon is down: the persisted pools, holders and requests (nobody is blocked). */
function* storedPools(now: number): Tx<SnapshotPool[]> {
  type Row = { agent_id: string; reason: string | null; weight: number };
  const out: SnapshotPool[] = [];
  for (const p of yield* all<{ name: string; capacity: number; version: number; offer_seconds: number }>("SELECT * FROM pools ORDER BY name")) {
    // A lapsed slot is not a holder, even before the daemon's timer has removed its row.
    const holders = yield* all<Row & { acquired_at: number; pid: number | null }>(
      "SELECT * FROM slots WHERE pool = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY acquired_at",
      p.name,
      now,
    );
    // The slot queue's places in the lines (src/domain/lines.ts), the request as the pools wrote it.
    type Req = { weight: number; reason: string | null; state: "queued" | "offered" | "paused"; offerExpiresAt: number | null };
    const waiters = (yield* all<{ agent_id: string; req: string; since: number }>("SELECT agent_id, req, since FROM waiters WHERE queue = 'slot' AND keys = ? ORDER BY ord", JSON.stringify([p.name]))).map(
      (r) => {
        const q = JSON.parse(r.req) as Req;
        return { agent_id: r.agent_id, reason: q.reason, weight: q.weight, since: r.since, state: q.state, offer_expires_at: q.offerExpiresAt };
      },
    );
    out.push({
      pool: p.name,
      capacity: p.capacity,
      in_use: holders.reduce((n, h) => n + h.weight, 0),
      offered: waiters.reduce((n, w) => n + (w.state === "offered" ? w.weight : 0), 0),
      queued: waiters.filter((w) => w.state !== "paused").length,
      version: p.version,
      offer_seconds: p.offer_seconds,
      holders: holders.map((h) => ({ agent_id: h.agent_id, ...opt("reason", h.reason), weight: h.weight, held_seconds: secondsSince(h.acquired_at, now), ...opt("pid", h.pid) })),
      waiters: waiters.map((w) => ({
        agent_id: w.agent_id,
        ...opt("reason", w.reason),
        weight: w.weight,
        waiting_seconds: secondsSince(w.since, now),
        state: w.state,
        blocked: false,
        ...opt("offer_expires_in_seconds", w.offer_expires_at === null ? undefined : secondsUntil(w.offer_expires_at, now)),
      })),
    });
  }
  return out;
}

/**
 * What `airlock status`, `airlock watch` and the dashboard show. On a shared store it is read
 * beside the other daemons' row bodies when this daemon's lines are the stored ones (no line
 * moved since it last caught up) and the journal's tail is settled: an open dashboard, asking
 * again at every burst of changes, no longer stops every daemon's row bodies each time
 * (docs/cluster.md, "The status snapshot beside row bodies"). Otherwise, and on SQLite, it is
 * read in the global order, which catches up first.
 */
export function statusSnapshot(kernel: Kernel): Awaitable<Snapshot> {
  return kernel.ctx.readLines((beside) => snapshotBody(kernel.clock.now(), kernel, beside));
}
