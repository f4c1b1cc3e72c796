// Presence: register_agent is the heartbeat. When a heartbeat lapses the scheduler fires at
// that exact moment and the agent departs: every primitive that registered a departure hook
// releases what the agent held (locks, task claims, later slots and path claims), waking the
// waiters behind it. unregister_agent is a departure too, announced instead of detected.
import { type Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";
import { assertTtl } from "./locks.ts";

export interface AgentRow {
  agent_id: string;
  registered_at: number;
  expires_at: number;
  role: string | null;
}

export type DepartureReason = "lapsed" | "unregistered";
type DepartureHook = (agentId: string, reason: DepartureReason) => void;

export class Presence {
  private readonly hooks: DepartureHook[] = [];

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {
    for (const row of c.store.q<AgentRow>("SELECT * FROM agents").all()) this.arm(row.agent_id, row.expires_at);
  }

  /** Hooks run inside the departing transaction, in registration order. */
  onDeparture(hook: DepartureHook): void {
    this.hooks.push(hook);
  }

  register(agentId: string, ttlMs: number, role?: string): number {
    assertTtl(ttlMs);
    return this.c.tx(() => {
      const now = this.c.clock.now();
      const expiresAt = now + ttlMs;
      // Only a first registration is a change worth a record: a heartbeat every few seconds
      // from every agent would flood the journal (and trim real changes out of it) while
      // saying nothing a watcher can act on; agent.departed reports when presence ends.
      const known = this.c.store.q<{ agent_id: string }>("SELECT agent_id FROM agents WHERE agent_id = ?").get(agentId);
      if (!known) this.journal.record("agent.registered", agentId, { agentId, data: { ...(role ? { role } : {}), ttl_seconds: Math.ceil(ttlMs / 1000) } });
      this.c.store
        .q(
          "INSERT INTO agents (agent_id, registered_at, expires_at, role) VALUES (?, ?, ?, ?) " +
            "ON CONFLICT(agent_id) DO UPDATE SET expires_at = excluded.expires_at, role = COALESCE(excluded.role, agents.role)",
        )
        .run(agentId, now, expiresAt, role ?? null);
      this.arm(agentId, expiresAt);
      return expiresAt;
    });
  }

  unregister(agentId: string): void {
    this.c.tx(() => this.depart(agentId, "unregistered"));
  }

  list(): AgentRow[] {
    return this.c.read(() =>
      this.c.store.q<AgentRow>("SELECT * FROM agents WHERE expires_at > ? ORDER BY agent_id").all(this.c.clock.now()),
    );
  }

  get(agentId: string): AgentRow | null {
    return this.c.store.q<AgentRow>("SELECT * FROM agents WHERE agent_id = ? AND expires_at > ?").get(agentId, this.c.clock.now());
  }

  private arm(agentId: string, expiresAt: number): void {
    this.c.scheduler.at(`agent:${agentId}`, expiresAt, () => {
      const row = this.c.store.q<AgentRow>("SELECT * FROM agents WHERE agent_id = ?").get(agentId);
      if (row && row.expires_at <= this.c.clock.now()) this.depart(agentId, "lapsed");
    });
  }

  private depart(agentId: string, reason: DepartureReason): void {
    const r = this.c.store.q("DELETE FROM agents WHERE agent_id = ?").run(agentId);
    this.c.scheduler.cancel(`agent:${agentId}`);
    if (r.changes > 0) this.journal.record("agent.departed", agentId, { agentId, reason });
    for (const hook of this.hooks) hook(agentId, reason);
  }
}
