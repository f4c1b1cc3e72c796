// Presence: register_agent is the heartbeat. When a heartbeat lapses the scheduler fires at
// that exact moment and the agent departs: every primitive that registered a departure hook
// releases what the agent held (locks, task claims, later slots and path claims), waking the
// waiters behind it. unregister_agent is a departure too, announced instead of detected.
import { get, all, run, type Tx } from "../store/tx.ts";
import { assertTtl, type Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";
import { rowsSince } from "./row-versions.ts";

export interface AgentRow {
  agent_id: string;
  registered_at: number;
  expires_at: number;
  role: string | null;
}

export type DepartureReason = "lapsed" | "unregistered";
type DepartureHook = (agentId: string, reason: DepartureReason) => Tx<void>;

export class Presence {
  private readonly hooks: DepartureHook[] = [];

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {}

  /**
   * Arms every stored agent's heartbeat (createKernel runs every primitive's load); with `since`
   * (a catch-up by deltas), only the agents stamped above it.
   */
  *load(since: number | null = null): Tx<void> {
    for (const row of yield* rowsSince<AgentRow>("agents", since)) this.arm(row.agent_id, row.expires_at);
  }

  /** Hooks run inside the departing transaction, in registration order. */
  onDeparture(hook: DepartureHook): void {
    this.hooks.push(hook);
  }

  async register(agentId: string, ttlMs: number, role?: string): Promise<number> {
    assertTtl(ttlMs);
    // The heartbeat of an agent already registered is a row body (docs/cluster.md, "Scaling
    // out"): one UPDATE of its row, so on a shared store heartbeats do not take the global
    // order. Its timer is armed after the commit. Only a first registration (or one after the
    // agent departed) is a transaction of the global order: it records agent.registered once.
    const beat = await this.c.rowTx("agents", agentId, () => this.beatTx(agentId, ttlMs, role));
    return beat ?? (await this.c.tx(() => this.registerTx(agentId, ttlMs, role)));
  }

  /** A known agent's heartbeat: its new expiry, or null when it is not registered (any more). */
  private *beatTx(agentId: string, ttlMs: number, role?: string): Tx<number | null> {
    const expiresAt = this.c.clock.now() + ttlMs;
    const r = yield* run("UPDATE agents SET expires_at = ?, role = COALESCE(?, role) WHERE agent_id = ?", expiresAt, role ?? null, agentId);
    if (r.changes === 0) return null;
    this.c.store.afterCommit(() => this.arm(agentId, expiresAt));
    return expiresAt;
  }

  private *registerTx(agentId: string, ttlMs: number, role?: string): Tx<number> {
    const now = this.c.clock.now();
    const expiresAt = now + ttlMs;
    // Only a first registration is a change worth a record: a heartbeat every few seconds
    // from every agent would flood the journal (and trim real changes out of it) while
    // saying nothing a watcher can act on; agent.departed reports when presence ends.
    const known = yield* get<{ agent_id: string }>("SELECT agent_id FROM agents WHERE agent_id = ?", agentId);
    if (!known) yield* this.journal.record("agent.registered", agentId, { agentId, data: { ...(role ? { role } : {}), ttl_seconds: Math.ceil(ttlMs / 1000) } });
    yield* run(
      "INSERT INTO agents (agent_id, registered_at, expires_at, role) VALUES (?, ?, ?, ?) " +
        "ON CONFLICT(agent_id) DO UPDATE SET expires_at = excluded.expires_at, role = COALESCE(excluded.role, agents.role)",
      agentId,
      now,
      expiresAt,
      role ?? null,
    );
    this.arm(agentId, expiresAt);
    return expiresAt;
  }

  async unregister(agentId: string): Promise<void> {
    await this.c.tx(() => this.depart(agentId, "unregistered"));
  }

  async list(): Promise<AgentRow[]> {
    return this.c.read(() => this.listTx());
  }

  *listTx(): Tx<AgentRow[]> {
    return yield* all<AgentRow>("SELECT * FROM agents WHERE expires_at > ? ORDER BY agent_id", this.c.clock.now());
  }

  async get(agentId: string): Promise<AgentRow | null> {
    return this.c.read(() => this.find(agentId));
  }

  /** The live agent row, inside a transaction. */
  *find(agentId: string): Tx<AgentRow | null> {
    return yield* get<AgentRow>("SELECT * FROM agents WHERE agent_id = ? AND expires_at > ?", agentId, this.c.clock.now());
  }

  /** Whether the agent is registered now, live or lapsing (the messages' "seen"). */
  *knows(agentId: string): Tx<boolean> {
    return (yield* get("SELECT 1 AS x FROM agents WHERE agent_id = ?", agentId)) !== null;
  }

  private arm(agentId: string, expiresAt: number): void {
    this.c.scheduler.at(`agent:${agentId}`, expiresAt, () => this.lapse(agentId));
  }

  private *lapse(agentId: string): Tx<void> {
    const row = yield* get<AgentRow>("SELECT * FROM agents WHERE agent_id = ?", agentId);
    if (row && row.expires_at <= this.c.clock.now()) yield* this.depart(agentId, "lapsed");
    // A heartbeat on another daemon moved it (heartbeats move no version): watch the new one.
    else if (row) this.arm(agentId, row.expires_at);
  }

  private *depart(agentId: string, reason: DepartureReason): Tx<void> {
    const r = yield* run("DELETE FROM agents WHERE agent_id = ?", agentId);
    this.c.scheduler.cancel(`agent:${agentId}`);
    if (r.changes > 0) yield* this.journal.record("agent.departed", agentId, { agentId, reason });
    for (const hook of this.hooks) yield* hook(agentId, reason);
  }
}
