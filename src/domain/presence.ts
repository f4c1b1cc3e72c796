// Presence: register_agent is the heartbeat. When a heartbeat lapses the scheduler fires at
// that exact moment and the agent departs: every primitive that registered a departure hook
// releases what the agent held (locks, task claims, later slots and path claims), waking the
// waiters behind it. unregister_agent is a departure too, announced instead of detected.
import { AirlockError } from "../errors.ts";
import { get, all, type Condition, last, run, type Tx } from "../store/tx.ts";
import { assertTtl, type Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";
import { rowsSince } from "./row-versions.ts";
import { deadlineOf } from "./timers.ts";

export interface AgentRow {
  agent_id: string;
  registered_at: number;
  expires_at: number;
  role: string | null;
}

/** A live agent's heartbeat: its expiry and role moved (values: expires_at, role, agent_id, now). */
const BEAT = "UPDATE agents SET expires_at = ?, role = COALESCE(?, role) WHERE agent_id = ? AND expires_at > ?";
/** An agent not known yet (registerTx, insertTx): nothing when its row is there. */
const INSERT_AGENT = "INSERT INTO agents (agent_id, registered_at, expires_at, role) VALUES (?, ?, ?, ?) ON CONFLICT(agent_id) DO NOTHING";
/** agent.registered's data: its role, when it has one, and its TTL. */
const registered = (ttlMs: number, role?: string): Record<string, unknown> => ({ ...(role ? { role } : {}), ttl_seconds: Math.ceil(ttlMs / 1000) });

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
    for (const row of yield* rowsSince<AgentRow>("agents", since)) this.arm(row.agent_id, row.expires_at, true);
  }

  /** Hooks run inside the departing transaction, in registration order. */
  onDeparture(hook: DepartureHook): void {
    this.hooks.push(hook);
  }

  async register(agentId: string, ttlMs: number, role?: string): Promise<number> {
    assertTtl(ttlMs);
    // A row body (docs/cluster.md, "Scaling out"): on a shared store heartbeats and first
    // registrations alike do not take the global order. Its timer is armed after the commit.
    // A live agent's heartbeat is one statement, its body's last: a batch of heartbeats commits
    // in the flight that carries it ("A row batch in one flight"). So is a first registration,
    // its insert and its entry. Anything else (a row found there after all: another daemon's
    // registration, or a lapsed row) runs the whole registration in a transaction of its own.
    const beaten = await this.c.rowTx("agents", agentId, () => this.heartbeatTx(agentId, ttlMs, role));
    if (beaten !== null) return beaten;
    const made = await this.c.rowTx("agents", agentId, () => this.insertTx(agentId, ttlMs, role));
    if (made !== null) return made;
    const at = await this.c.rowTx("agents", agentId, () => this.registerTx(agentId, ttlMs, role));
    if (at !== null) return at;
    // It lapsed and has not departed yet (its lapse is another daemon's to fire, or this one's
    // a moment from now): a line body departs it first, as its lapse would, then registers it anew.
    const self = this;
    return this.c.tx(function* (): Tx<number> {
      yield* self.lapse(agentId);
      const again = yield* self.registerTx(agentId, ttlMs, role);
      if (again === null) throw new AirlockError("internal", `agent ${agentId} could not be registered: its row lapsed again at once`);
      return again;
    });
  }

  /** A live agent's heartbeat, as a body's last statement: its new expiry, or null (not live). */
  private *heartbeatTx(agentId: string, ttlMs: number, role?: string): Tx<number | null> {
    const now = this.c.clock.now();
    const expiresAt = now + ttlMs;
    const row = yield* last<{ expires_at: number }>([], `${BEAT} RETURNING expires_at`, expiresAt, role ?? null, agentId, now);
    return row ? this.beaten(agentId, expiresAt) : null;
  }

  /** A first registration, as a body's last statement (its insert and its entry): its expiry, or null (a row was there). */
  private *insertTx(agentId: string, ttlMs: number, role?: string): Tx<number | null> {
    const now = this.c.clock.now();
    const expiresAt = now + ttlMs;
    const entry = { data: "?", args: [JSON.stringify(registered(ttlMs, role))] };
    const made = yield* this.journal.lastRecorded("agent.registered", agentId, entry, { agentId }, `${INSERT_AGENT} RETURNING agent_id`, agentId, now, expiresAt, role ?? null);
    return made ? this.beaten(agentId, expiresAt) : null;
  }

  /** A registration or heartbeat that moved the row: its timer armed after the commit, its expiry. */
  private beaten(agentId: string, expiresAt: number): number {
    this.c.store.afterCommit(() => this.arm(agentId, expiresAt));
    return expiresAt;
  }

  /**
   * A live agent's heartbeat moves its expiry (one UPDATE); an unknown one (first, or after it
   * departed) is inserted, and only the insert that made the row records agent.registered:
   * two first registrations at once on two daemons are ordered by the row's key, and the
   * second finds the row and beats. Null: the row is there but lapsed (its departure first).
   */
  private *registerTx(agentId: string, ttlMs: number, role?: string): Tx<number | null> {
    const now = this.c.clock.now();
    const expiresAt = now + ttlMs;
    const beaten = () => this.beaten(agentId, expiresAt);
    if ((yield* this.beat(agentId, expiresAt, now, role)) > 0) return beaten();
    const made = yield* get<{ agent_id: string }>(`${INSERT_AGENT} RETURNING agent_id`, agentId, now, expiresAt, role ?? null);
    // Only a first registration is a change worth a record: a heartbeat every few seconds
    // from every agent would flood the journal (and trim real changes out of it) while
    // saying nothing a watcher can act on; agent.departed reports when presence ends.
    if (made) {
      yield* this.journal.record("agent.registered", agentId, { agentId, data: registered(ttlMs, role) });
      return beaten();
    }
    return (yield* this.beat(agentId, expiresAt, now, role)) > 0 ? beaten() : null;
  }

  /**
   * The heartbeat of a live agent: the rows it moved (0: not registered, or lapsed: a lapsed
   * agent departs before it is registered again, whether or not this daemon armed its lapse).
   */
  private *beat(agentId: string, expiresAt: number, now: number, role?: string): Tx<number> {
    return (yield* run(BEAT, expiresAt, role ?? null, agentId, now)).changes;
  }

  async unregister(agentId: string): Promise<void> {
    await this.c.tx(() => this.depart(agentId, "unregistered"));
  }

  async list(): Promise<AgentRow[]> {
    return this.c.rowRead("agents", "", () => this.listTx());
  }

  *listTx(): Tx<AgentRow[]> {
    return yield* all<AgentRow>("SELECT * FROM agents WHERE expires_at > ? ORDER BY agent_id", this.c.clock.now());
  }

  async get(agentId: string): Promise<AgentRow | null> {
    return this.c.rowRead("agents", agentId, () => this.find(agentId));
  }

  /** The live agent row, inside a transaction. */
  *find(agentId: string): Tx<AgentRow | null> {
    return yield* get<AgentRow>("SELECT * FROM agents WHERE agent_id = ? AND expires_at > ?", agentId, this.c.clock.now());
  }

  /** Whether the agent is registered now, live or lapsing (the messages' "seen"). */
  *knows(agentId: string): Tx<boolean> {
    const known = this.known(agentId);
    return (yield* get(`SELECT 1 AS x WHERE ${known.sql}`, ...known.args)) !== null;
  }

  /** knows, as a condition: of its own read, and of another statement (the messages' one-statement send). */
  known(agentId: string): Condition {
    return { sql: "EXISTS (SELECT 1 FROM agents WHERE agent_id = ?)", args: [agentId] };
  }

  /** `fromRows`: read from rows another daemon may have written, whose timer fires it first (Scheduler.at's look). */
  private arm(agentId: string, expiresAt: number, fromRows = false): void {
    const look = fromRows ? deadlineOf("SELECT expires_at AS at FROM agents WHERE agent_id = ?", agentId) : undefined;
    this.c.scheduler.at(`agent:${agentId}`, expiresAt, () => this.lapse(agentId), look);
  }

  private *lapse(agentId: string): Tx<void> {
    const row = yield* get<AgentRow>("SELECT * FROM agents WHERE agent_id = ?", agentId);
    if (row && row.expires_at <= this.c.clock.now()) yield* this.depart(agentId, "lapsed");
    // A heartbeat on another daemon moved it (heartbeats move no version): watch the new one,
    // as that daemon's.
    else if (row) this.arm(agentId, row.expires_at, true);
  }

  private *depart(agentId: string, reason: DepartureReason): Tx<void> {
    const r = yield* run("DELETE FROM agents WHERE agent_id = ?", agentId);
    this.c.scheduler.cancel(`agent:${agentId}`);
    if (r.changes > 0) yield* this.journal.record("agent.departed", agentId, { agentId, reason });
    for (const hook of this.hooks) yield* hook(agentId, reason);
  }
}
