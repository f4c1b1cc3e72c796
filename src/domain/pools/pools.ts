// The machine-wide heavy-work budget: pools are named counting semaphores (weights in units
// of capacity). An agent takes a slot before a build or a test suite and keeps coding while it
// is queued. This is the core: acquire, release, renew, configure, departure, and the rows.
// The rest lives beside it: the offer policy (offers.ts: FIFO with offers, pauses, weights),
// process-bound slots (binding.ts: the process and host watch), and what the pools show
// (views.ts). Requests persist (an agent may wait twenty minutes for a build slot), and so do
// holders: holders in `slots`, requests as the slot queue's places in the lines (lines.ts).
// Without a pid a slot has a TTL with renewal, and its agent's departure releases it. Every
// change is recorded in the journal with a reason.
import { hostname } from "node:os";
import { AirlockError } from "../../errors.ts";
import type { ProcessBinding } from "../../machine/process.ts";
import { all, get, run, type Tx } from "../../store/tx.ts";
import type { Wait, WaitGraph, WaitSource } from "../deadlock.ts";
import type { Journal } from "../journal.ts";
import { assertTtl, type Ctx } from "../context.ts";
import { type HandedOver, refuseOwnHandOver } from "../primitive.ts";
import { rowsSince } from "../row-versions.ts";
import { deadlineOf } from "../timers.ts";
import { newToken } from "../tokens.ts";
import type { WaitQueue } from "../wait.ts";
import { isBlocked, type Outcome } from "../waiter.ts";
import { bindingOf, checkPid, pidStart, ProcessWatch } from "./binding.ts";
import { Offers } from "./offers.ts";
import {
  type ConfigureRequest,
  type ConfigureResult,
  DEFAULT_OFFER_SECONDS,
  DEFAULT_SLOT_TTL_MS,
  HOST_GONE_MS,
  machinePoolName,
  POOL_WAKE_GRACE_MS,
  type PoolRow,
  type PoolView,
  type SlotGrant,
  type SlotRefusal,
  type SlotRenewResult,
  type SlotRequest,
  type SlotResult,
  type SlotRow,
  type SlotWait,
  type SlotWaiter,
  type Want,
} from "./types.ts";
import { poolView, refusal, waitOf } from "./views.ts";

export class Pools implements WaitSource {
  readonly waits: WaitQueue<SlotWait, SlotGrant>;
  private readonly offers: Offers;
  private readonly process: ProcessWatch;
  private readonly rows = new Map<string, PoolRow>();

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
    private readonly graph: WaitGraph,
    /** A shared store: how long a machine's daemons may all be gone before its bound slots go. */
    hostGoneMs = HOST_GONE_MS,
  ) {
    graph.register(this);
    this.waits = c.waitQueue<SlotWait, SlotGrant>("slot", POOL_WAKE_GRACE_MS, {
      onExpire: (w) => this.abandon(w),
      revoke: (w, granted) => this.revoke(w, granted),
    });
    this.offers = new Offers(c, this.waits, {
      find: (name) => this.find(name),
      pool: (name) => this.pool(name),
      record: (kind, w, reason, more) => this.record(kind, w, reason, more),
      grantRequest: (w, want, byQueue) => this.grantRequest(w, want, byQueue),
    });
    const gone = { releaseSlot: (token: string, reason: string) => this.releaseSlot(token, reason), withdraw: (w: SlotWaiter, reason: string) => this.withdraw(w, reason) };
    this.process = new ProcessWatch(c, this.waits, gone, hostGoneMs);
  }

  async acquire(req: SlotRequest, signal?: AbortSignal): Promise<SlotResult> {
    if (req.weight !== undefined) assertUnits("weight", req.weight);
    if (req.ttlMs !== undefined) assertTtl(req.ttlMs);
    const binding = req.pid === undefined ? null : checkPid(req.pid);
    const first = await this.c.tx(() => this.acquireTx(req, binding, signal));
    if ("done" in first) return first.done;

    const w = first.wait;
    const outcome = await first.blocked;
    if (outcome.kind === "granted") return outcome.value;
    return this.c.tx(() => this.afterWaitTx(w, req.pool, outcome.kind === "timeout"));
  }

  private *acquireTx(
    req: SlotRequest,
    binding: ProcessBinding | null,
    signal?: AbortSignal,
  ): Tx<{ done: SlotResult } | { wait: SlotWaiter; blocked: Promise<Outcome<SlotGrant>> }> {
    const pool = yield* this.pool(req.pool);
    if (req.weight !== undefined && req.weight > pool.capacity) {
      throw new AirlockError("invalid_argument", `weight must be <= the pool's capacity (${pool.capacity}) (got ${req.weight})`);
    }
    let w = this.waits.find(req.wakeToken, req.pool, req.agentId);
    // A place in line is for the weight it was taken with: changing it would be a new request.
    if (w && req.weight !== undefined && req.weight !== w.req.weight) {
      throw new AirlockError(
        "invalid_argument",
        `weight must be the weight your queued request asked for (${w.req.weight}) when the call resumes it (got ${req.weight}): ` +
          "leave weight out to keep your place, or release_slot with its wake_token and acquire_slot again to queue with the new weight",
      );
    }
    // Left out: what the request queued with, or the defaults for a new one.
    const want = {
      agentId: req.agentId,
      weight: req.weight ?? w?.req.weight ?? 1,
      reason: req.reason ?? w?.req.reason ?? null,
      ttlMs: req.ttlMs ?? w?.req.ttlMs ?? DEFAULT_SLOT_TTL_MS,
      binding: binding ?? w?.req.binding ?? null,
    };
    if (w) {
      this.waits.adopt(w);
      // An offer is claimed: it was sized for this very weight (held + offered <= capacity).
      if (w.req.state === "offered") return { done: yield* this.grantRequest(w, want) };
      Object.assign(w.req, want);
      if (w.req.state === "paused") {
        // Back from a missed offer: it rejoins at the tail.
        this.waits.moveToTail(w);
        w.req.state = "queued";
        yield* this.record("pool.queued", w, "rejoined after a missed offer");
      }
      this.waits.touch(w);
      this.waits.keep(w, true);
    } else {
      const nobodyWaits = !this.waits.line(req.pool).some((x) => x.req.state !== "paused");
      if (nobodyWaits && want.weight <= (yield* this.offers.free(pool))) return { done: yield* this.grantNew(pool.name, want) };
      w = this.waits.enqueue(req.pool, { ...want, state: "queued", offerExpiresAt: null }, req.agentId);
      this.waits.keep(w);
      yield* this.record("pool.queued", w, req.reason ?? null);
    }
    if (binding) this.process.watch();
    yield* this.offers.serve(req.pool);
    // The caller is here right now: an offer made to it is claimed at once.
    if (w.req.state === "offered") return { done: yield* this.grantRequest(w, w.req) };
    if (req.waitMs <= 0) return { done: yield* this.refusal(w) };
    const mine = yield* waitOf(w, this.waits);
    const deadlock = mine && (yield* this.graph.detect({ ...mine, blocked: true }));
    if (deadlock) {
      // The caller is the one answered: its call is the one in hand. Its request leaves the line.
      const { wakeToken: _gone, ...refusal } = yield* this.refusal(w);
      yield* this.withdraw(w, "withdrawn: waiting would have closed a deadlock");
      yield* this.journal.record("deadlock.detected", req.pool, { agentId: req.agentId, data: { kind: "slot", ...deadlock } });
      return { done: { ...refusal, position: 0, deadlock } };
    }
    return { wait: w, blocked: this.waits.block(w, this.c.clock.now() + req.waitMs, signal) };
  }

  /** A blocked call that ended without a grant (timeout or disconnect). */
  private *afterWaitTx(w: SlotWaiter, poolName: string, timedOut: boolean): Tx<SlotResult> {
    const still = this.waits.find(w.token, poolName);
    // Offered in the instant the wait ended, to a caller that is still here: it is claimed.
    if (timedOut && still?.req.state === "offered") return yield* this.grantRequest(still, still.req);
    if (!still) throw new AirlockError("unavailable", "the request left the line while it waited (its agent departed or its process exited)");
    return yield* this.refusal(still);
  }

  /** Releases a held slot, or withdraws a queued request (by its wake_token). Idempotent. */
  async release(token: string): Promise<boolean> {
    return this.c.tx(() => this.releaseTx(token));
  }

  private *releaseTx(token: string): Tx<boolean> {
    if (yield* this.releaseSlot(token, "released")) return true;
    const w = this.waits.get(token);
    if (!w) return false;
    yield* this.withdraw(w, "withdrawn by its agent");
    return true;
  }

  /** A slot lives ttl from now; with a pid it is (re)bound to that process group instead. */
  async renew(token: string, ttlMs: number, pid?: number): Promise<SlotRenewResult> {
    assertTtl(ttlMs);
    const binding = pid === undefined ? null : checkPid(pid);
    return this.c.tx(() => this.renewTx(token, ttlMs, binding));
  }

  private *renewTx(token: string, ttlMs: number, binding: ProcessBinding | null): Tx<SlotRenewResult> {
    const slot = yield* get<SlotRow>("SELECT * FROM slots WHERE token = ?", token);
    if (!slot) return { renewed: false, error: "store: slot not found" };
    if (binding) {
      yield* run("UPDATE slots SET pid = ?, pgid = ?, pid_start = ?, expires_at = NULL WHERE token = ?", binding.pid, binding.pgid, pidStart(binding), token);
      this.c.scheduler.cancel(`slot:${token}`);
      this.process.watch();
      return { renewed: true, expiresAt: null, pid: binding.pid };
    }
    if (slot.pid !== null) return { renewed: true, expiresAt: null, pid: slot.pid }; // bound: no expiry to move
    const expiresAt = this.c.clock.now() + ttlMs;
    yield* run("UPDATE slots SET expires_at = ? WHERE token = ?", expiresAt, token);
    this.armSlot(token, expiresAt);
    return { renewed: true, expiresAt };
  }

  async configure(req: ConfigureRequest): Promise<ConfigureResult> {
    assertUnits("capacity", req.capacity);
    return this.c.tx(() => this.configureTx(req));
  }

  private *configureTx(req: ConfigureRequest): Tx<ConfigureResult> {
    const row = yield* get<PoolRow>("SELECT * FROM pools WHERE name = ?", req.pool);
    const version = row?.version ?? 0;
    if (version !== req.expectedVersion) {
      const what = row ? `is at version ${version}` : "does not exist yet (create it with expected_version 0)";
      return { configured: false, version, error: `expected_version ${req.expectedVersion} does not match: pool ${req.pool} ${what}; read list_pools and try again` };
    }
    const offerSeconds = req.offerSeconds ?? row?.offer_seconds ?? DEFAULT_OFFER_SECONDS;
    const now = this.c.clock.now();
    yield* run(
      "INSERT INTO pools (name, capacity, offer_seconds, version, updated_at, updated_by, reason) VALUES (?, ?, ?, ?, ?, ?, ?) " +
        "ON CONFLICT(name) DO UPDATE SET capacity = excluded.capacity, offer_seconds = excluded.offer_seconds, version = excluded.version, " +
        "updated_at = excluded.updated_at, updated_by = excluded.updated_by, reason = excluded.reason",
      req.pool,
      req.capacity,
      offerSeconds,
      version + 1,
      now,
      req.author,
      req.reason,
    );
    // Read afresh from now on; and if this transaction rolls back, forget what it read.
    this.rows.delete(req.pool);
    this.c.store.afterCommit(() => {}, () => this.rows.delete(req.pool));
    yield* this.journal.record("pool.configured", req.pool, {
      agentId: req.author,
      reason: req.reason,
      data: { capacity: req.capacity, previous_capacity: row?.capacity ?? null, offer_seconds: offerSeconds, version: version + 1 },
    });
    yield* this.offers.withdrawExcess(req.pool);
    yield* this.offers.serve(req.pool);
    return { configured: true, version: version + 1 };
  }

  async list(): Promise<PoolView[]> {
    return this.c.readLines(() => this.listTx());
  }

  *listTx(): Tx<PoolView[]> {
    const views: PoolView[] = [];
    for (const p of yield* all<PoolRow>("SELECT * FROM pools ORDER BY name")) views.push(yield* poolView(p, this.waits, this.c.clock.now()));
    return views;
  }

  *waitsOf(agentId: string, includeDetached: boolean): Tx<Wait[]> {
    const out: Wait[] = [];
    for (const w of [...this.waits.of(agentId)]) {
      if (!includeDetached && !isBlocked(w)) continue;
      const wait = yield* waitOf(w, this.waits);
      if (wait) out.push(wait);
    }
    return out;
  }

  *allWaits(): Tx<Wait[]> {
    const out: Wait[] = [];
    for (const w of [...this.waits.all()]) {
      const wait = yield* waitOf(w, this.waits);
      if (wait) out.push(wait);
    }
    return out;
  }

  /** Slots an agent holds, by pool (for list_agents and status). */
  async heldBy(agentId: string): Promise<string[]> {
    const rows = await this.c.rowRead("slots", "", () => all<{ pool: string }>("SELECT pool FROM slots WHERE agent_id = ? ORDER BY acquired_at", agentId));
    return rows.map((r) => r.pool);
  }

  /** Whether the agent holds a slot or has a request in a pool's line (the messages' "seen"). */
  *knows(agentId: string): Tx<boolean> {
    for (const _ of this.waits.of(agentId)) return true;
    return (yield* get("SELECT 1 AS x FROM slots WHERE agent_id = ? LIMIT 1", agentId)) !== null;
  }

  /** The agents holding slots of the pool now (send_message's `about: pool:NAME`). */
  *holders(pool: string): Tx<string[]> {
    const rows = yield* all<{ agent_id: string }>("SELECT agent_id FROM slots WHERE pool = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY acquired_at", pool, this.c.clock.now());
    return [...new Set(rows.map((r) => r.agent_id))];
  }

  /**
   * hand_over: the slot goes to toAgent with a new token; its fence is the hand-over's journal
   * revision (above its grant's), its expiry stays. A slot bound to a process goes with that
   * process, so it is refused. Null when no slot has this token.
   */
  *handOver(token: string, toAgent: string): Tx<HandedOver | null> {
    const slot = yield* get<SlotRow>("SELECT * FROM slots WHERE token = ? AND (expires_at IS NULL OR expires_at > ?)", token, this.c.clock.now());
    if (!slot) return null;
    refuseOwnHandOver(slot.agent_id, toAgent, `pool:${slot.pool}`);
    if (slot.pid !== null) throw new AirlockError("invalid_argument", `token: this slot is bound to process ${slot.pid} and is released when it ends; a bound slot cannot be handed over`);
    const next = newToken();
    const fence = yield* this.journal.recordFence("pool.handed_over", slot.pool, { agentId: slot.agent_id, data: { to: toAgent, weight: slot.weight, slot: token.slice(0, 8), new_slot: next.slice(0, 8) } });
    yield* run("UPDATE slots SET token = ?, agent_id = ?, fence = ? WHERE token = ?", next, toAgent, fence, token);
    this.c.scheduler.cancel(`slot:${token}`);
    if (slot.expires_at !== null) this.armSlot(next, slot.expires_at);
    return { about: `pool:${slot.pool}`, from: slot.agent_id, token: next, fence };
  }

  /** Presence hook: an agent that departs releases its unbound slots and leaves every unbound line. */
  *releaseAllOf(agentId: string): Tx<void> {
    const slots = yield* all<SlotRow>("SELECT * FROM slots WHERE agent_id = ? AND pid IS NULL", agentId);
    for (const s of slots) yield* this.releaseSlot(s.token, "agent departed");
    for (const w of [...this.waits.all()]) if (w.agentId === agentId && !w.req.binding) yield* this.withdraw(w, "agent departed");
  }

  /** The granted call's client was gone: the slot passes on and the request is paused. */
  private *revoke(w: SlotWaiter, g: SlotGrant): Tx<void> {
    const slot = yield* get<SlotRow>("SELECT * FROM slots WHERE token = ?", g.token);
    if (!slot) return;
    yield* run("DELETE FROM slots WHERE token = ?", g.token);
    this.c.scheduler.cancel(`slot:${g.token}`);
    w.req.state = "paused";
    w.req.offerExpiresAt = null;
    // Unless the agent has already called again (and so holds a newer request), it is paused.
    if (this.waits.reinstate(w)) {
      this.waits.touch(w);
      yield* this.record("pool.paused", w, "granted while its client was gone; it rejoins at the tail when it calls again");
    }
    yield* this.offers.serve(w.key);
  }

  /** A request leaves the line (it takes a slot, is withdrawn, or its agent or process is gone). */
  private unqueue(w: SlotWaiter): void {
    this.waits.remove(w);
    this.offers.cancel(w);
  }

  private *withdraw(w: SlotWaiter, reason: string): Tx<void> {
    const hadOffer = w.req.state === "offered";
    this.unqueue(w);
    yield* this.record("pool.released", w, reason, { withdrawn: true });
    if (hadOffer) yield* this.offers.serve(w.key);
  }

  /** The wait queue's onExpire: a request whose agent has not called for POOL_WAKE_GRACE_MS leaves the line. */
  private *abandon(w: SlotWaiter): Tx<void> {
    yield* this.record("pool.released", w, "request abandoned: no call for an hour", { withdrawn: true });
    if (w.req.state === "offered") yield* this.offers.serve(w.key);
  }

  /**
   * Turns a request into a held slot. The caller is either here (it claims its offer: the
   * request leaves the line now) or blocked (byQueue: the wait queue's grant answers it).
   */
  private *grantRequest(w: SlotWaiter, want: Want, byQueue = false): Tx<SlotGrant> {
    if (byQueue) this.offers.cancel(w);
    else this.unqueue(w);
    return yield* this.grantNew(w.key, want, w.since);
  }

  private *grantNew(poolName: string, want: Want, since?: number): Tx<SlotGrant> {
    const now = this.c.clock.now();
    const token = newToken();
    const b = want.binding;
    const expiresAt = b ? null : now + want.ttlMs;
    // The grant's journal revision is its fence: global, persisted and strictly increasing, so
    // strictly increasing per pool too, at no extra write on the path every slot takes.
    const fence = yield* this.journal.recordFence("pool.granted", poolName, {
      agentId: want.agentId,
      reason: want.reason,
      // slot: the token's prefix, as waiters' entries keep theirs (request): a later release_slot of it can say "already released".
      data: compactData({ weight: want.weight, pid: b?.pid, waited_ms: since === undefined ? 0 : now - since, slot: token.slice(0, 8) }),
    });
    yield* run(
      "INSERT INTO slots (token, pool, agent_id, weight, reason, fence, acquired_at, expires_at, pid, pgid, pid_start) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      token,
      poolName,
      want.agentId,
      want.weight,
      want.reason,
      fence,
      now,
      expiresAt,
      b?.pid ?? null,
      b?.pgid ?? null,
      b ? pidStart(b) : null,
    );
    if (expiresAt !== null) this.armSlot(token, expiresAt);
    else this.process.watch();
    const g: SlotGrant = { granted: true, token, pool: poolName, weight: want.weight, fence, expiresAt };
    if (b) g.pid = b.pid;
    return g;
  }

  /** Deletes a held slot, journals why and serves the line; false when there is no such slot. */
  private *releaseSlot(token: string, reason: string): Tx<boolean> {
    const slot = yield* get<SlotRow>("DELETE FROM slots WHERE token = ? RETURNING *", token);
    if (!slot) return false;
    this.c.scheduler.cancel(`slot:${slot.token}`);
    yield* this.journal.record("pool.released", slot.pool, {
      agentId: slot.agent_id,
      reason,
      data: compactData({ weight: slot.weight, fence: slot.fence, held_ms: this.c.clock.now() - slot.acquired_at, pid: slot.pid }),
    });
    yield* this.offers.serve(slot.pool);
    return true;
  }

  private *refusal(w: SlotWaiter): Tx<SlotRefusal> {
    return yield* refusal(w, yield* this.pool(w.key), this.waits, this.c.clock.now());
  }

  /** A pool's row, from memory: pools change only through configure, which drops the entry. */
  private *find(name: string): Tx<PoolRow | null> {
    let p = this.rows.get(name);
    if (!p) {
      p = (yield* get<PoolRow>("SELECT * FROM pools WHERE name = ?", name)) ?? undefined;
      if (p) this.rows.set(name, p);
    }
    return p ?? null;
  }

  private *pool(name: string): Tx<PoolRow> {
    const p = (yield* this.find(name)) ?? (yield* this.machinePool(name));
    if (!p) throw new AirlockError("invalid_argument", `unknown pool: ${name}`);
    return p;
  }

  /**
   * `machine:<this machine's name>/heavy` exists wherever a daemon runs: the machine's own
   * budget, whatever the store (on a shared store `heavy` is the team's). Created on first use
   * as `heavy` is, one heavy job at a time; configure_pool changes it like any pool.
   */
  private *machinePool(name: string): Tx<PoolRow | null> {
    if (name !== machinePoolName()) return null;
    const now = this.c.clock.now();
    yield* run(
      "INSERT INTO pools (name, capacity, offer_seconds, version, updated_at, updated_by, reason) VALUES (?, 1, ?, 1, ?, 'airlock', ?) ON CONFLICT(name) DO NOTHING",
      name,
      DEFAULT_OFFER_SECONDS,
      now,
      "default: this machine's heavy jobs, one at a time",
    );
    return yield* this.find(name);
  }

  // ---- load and refresh ----

  /**
   * At start: holders' expiries and offers' deadlines armed (the lines, requests included, are
   * loaded before: src/domain/lines.ts, or on a shared store the cluster's catch-up), and bound
   * groups checked at once (createKernel runs every primitive's load).
   */
  *load(shared = false): Tx<void> {
    yield* this.refresh();
    if (shared) return;
    this.process.checkNow();
  }

  /**
   * Another daemon changed the shared store (or the daemon starts): the cached pool rows go, and
   * every holder's expiry and every offer's deadline is armed here too (whichever daemon gets
   * there first acts).
   */
  *refresh(since: number | null = null): Tx<void> {
    this.rows.clear();
    const me = hostname();
    // With since (a catch-up by deltas, docs/cluster.md): only the slots stamped above it.
    for (const s of yield* rowsSince<SlotRow>("slots", since)) {
      if (s.expires_at !== null) this.armSlot(s.token, s.expires_at, true);
      else this.c.scheduler.cancel(`slot:${s.token}`);
      const host = bindingOf(s)?.host;
      if (host !== undefined && host !== me) this.process.watchHosts();
    }
    for (const w of this.waits.all()) {
      if (w.req.state === "offered") this.offers.arm(w);
      if (w.req.binding?.host !== undefined && w.req.binding.host !== me) this.process.watchHosts();
    }
  }

  /** `fromRows`: read from rows another daemon may have written, whose timer fires it first (Scheduler.at's look). */
  private armSlot(token: string, expiresAt: number, fromRows = false): void {
    const look = fromRows ? deadlineOf("SELECT expires_at AS at FROM slots WHERE token = ?", token) : undefined;
    this.c.scheduler.at(`slot:${token}`, expiresAt, () => this.slotLapsed(token), look);
  }

  private *slotLapsed(token: string): Tx<void> {
    const s = yield* get<SlotRow>("SELECT * FROM slots WHERE token = ?", token);
    if (s && s.expires_at !== null && s.expires_at <= this.c.clock.now()) yield* this.releaseSlot(token, "ttl expired");
  }

  private *record(kind: string, w: SlotWaiter, reason: string | null, more: Record<string, unknown> = {}): Tx<void> {
    yield* this.journal.record(kind, w.key, { agentId: w.agentId, reason, data: compactData({ weight: w.req.weight, request: w.token.slice(0, 8), ...more }) });
  }
}

/** Weights and capacities are whole units >= 1 (SPEC §5): 1.5 of a build slot means nothing. */
function assertUnits(field: string, n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new AirlockError("invalid_argument", `${field} must be a whole number >= 1 (got ${n})`);
}

function compactData(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}
