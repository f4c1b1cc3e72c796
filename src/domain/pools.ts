// The machine-wide heavy-work budget: pools are named counting semaphores (weights in units
// of capacity). An agent takes a slot before a build or a test suite and keeps coding while it
// is queued. Pools are the second policy of the one waiter mechanism:
// - FIFO with offers: when capacity frees, the earliest request gets it — at once if its call
//   is blocked right now, else as an *offer* reserved for the pool's offer_seconds, claimed by
//   its next call. An offer not claimed in time passes on and the absent request is *paused*
//   (skipped) until it calls again, which puts it back in line at the tail.
//   Invariant: held + offered ≤ capacity (held may exceed a lowered capacity: nothing is revoked).
// - Weights: a request that does not fit blocks the ones behind it (no overtaking at the head).
// - Requests persist (an agent may wait twenty minutes for a build slot), and so do holders:
//   holders in `slots`, requests as the slot queue's places in the lines (src/domain/lines.ts).
// - A slot bound to a pid lives exactly as long as that process group: checked every
//   PROCESS_WATCH_MS, and at start, never released merely for being old. Without a pid a slot
//   has a TTL with renewal, and its agent's departure releases it.
// Every change is recorded in the journal with a reason.
import { hostname } from "node:os";
import { AirlockError } from "../errors.ts";
import { all, get, run, type Tx } from "../store/tx.ts";
import { bindProcess, groupAlive, type ProcessBinding, processUid } from "../machine/process.ts";
import { type Ctx, secondsSince } from "./context.ts";
import { type Deadlock, type Wait, type WaitGraph, type WaitSource } from "./deadlock.ts";
import type { Journal } from "./journal.ts";
import { assertTtl } from "./locks.ts";
import { newToken } from "./tokens.ts";
import { isBlocked, type Outcome, type Waiter, type WaitQueue } from "./wait.ts";

export const DEFAULT_POOL = "heavy";
export const DEFAULT_SLOT_TTL_MS = 900_000; // like a lock: long enough for a build, renew for longer

/** This machine's own budget, beside the store's `heavy` (the team's, on a shared store). */
export function machinePoolName(): string {
  return `machine:${hostname()}/${DEFAULT_POOL}`;
}
export const DEFAULT_OFFER_SECONDS = 30;
/** A shared store: a machine with no live daemon for this long has its bound slots released. */
export const HOST_GONE_MS = 10 * 60_000;
const HOST_CHECK_MS = 5_000;
// A queued request is long-lived (the agent codes while it waits); one whose agent has not
// called for an hour is taken to be abandoned. Each call, and each offer, renews it.
export const POOL_WAKE_GRACE_MS = 3600 * 1000;
// The spec asks for release within 1 s of the last exit; a quarter of that leaves room for a
// busy event loop, and reading /proc for a handful of groups four times a second costs nothing.
export const PROCESS_WATCH_MS = 250;

export type RequestState = "queued" | "offered" | "paused";

interface SlotWait {
  agentId: string;
  weight: number;
  reason: string | null;
  ttlMs: number;
  binding: ProcessBinding | null;
  state: RequestState;
  offerExpiresAt: number | null;
}
type SlotWaiter = Waiter<SlotWait, SlotGrant>;

export interface PoolRow {
  name: string;
  capacity: number;
  offer_seconds: number;
  version: number;
  updated_at: number;
  updated_by: string;
  reason: string;
}

export interface SlotRow {
  token: string;
  pool: string;
  agent_id: string;
  weight: number;
  reason: string | null;
  fence: number;
  acquired_at: number;
  expires_at: number | null;
  pid: number | null;
  pgid: number | null;
  pid_start: string | null;
}

export interface SlotGrant {
  granted: true;
  token: string;
  pool: string;
  weight: number;
  fence: number;
  /** null for a slot bound to a process group: it has no expiry. */
  expiresAt: number | null;
  pid?: number;
}

export interface Holder {
  agentId: string;
  reason: string | null;
  weight: number;
  heldSeconds: number;
  pid?: number;
}

export interface Queued {
  agentId: string;
  reason: string | null;
  weight: number;
  waitingSeconds: number;
  state: RequestState;
  blocked: boolean;
  /** For an offered request: when the offer lapses (ms). */
  offerExpiresAt?: number;
}

export interface SlotRefusal {
  granted: false;
  pool: string;
  capacity: number;
  inUse: number;
  position: number;
  /** Absent only with a deadlock: the request left the line. */
  wakeToken?: string;
  holders: Holder[];
  ahead: Queued[];
  /** Waiting would have closed this cycle: answered at once, and the request was withdrawn. */
  deadlock?: Deadlock;
}

export type SlotResult = SlotGrant | SlotRefusal;

/**
 * One acquire_slot call. A call that resumes a queued request (by its wake_token, or by agent and
 * pool) keeps what the request queued with for whatever it leaves out: weight, reason, ttl, pid.
 * A new request takes the defaults (weight 1, DEFAULT_SLOT_TTL_MS, no reason, unbound).
 */
export interface SlotRequest {
  agentId: string;
  pool: string;
  reason?: string | undefined;
  /** Whole units >= 1. A resumed request must ask for the weight it queued with, or leave it out. */
  weight?: number | undefined;
  waitMs: number;
  wakeToken?: string | undefined;
  ttlMs?: number | undefined;
  pid?: number | undefined;
}

export interface PoolView {
  pool: string;
  capacity: number;
  inUse: number;
  offered: number;
  queued: number;
  version: number;
  offerSeconds: number;
  holders: Holder[];
  waiters: Queued[];
}

export type ConfigureResult = { configured: true; version: number } | { configured: false; version: number; error: string };
export type SlotRenewResult = { renewed: true; expiresAt: number | null; pid?: number } | { renewed: false; error: string };

export interface ConfigureRequest {
  pool: string;
  capacity: number;
  expectedVersion: number;
  author: string;
  reason: string;
  offerSeconds?: number | undefined;
}

export class Pools implements WaitSource {
  readonly waits: WaitQueue<SlotWait, SlotGrant>;
  private watching = false;
  private watchingHosts = false;
  private readonly rows = new Map<string, PoolRow>();

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
    private readonly graph: WaitGraph,
    /** A shared store: how long a machine's daemons may all be gone before its bound slots go. */
    private readonly hostGoneMs = HOST_GONE_MS,
  ) {
    graph.register(this);
    this.waits = c.waitQueue<SlotWait, SlotGrant>("slot", POOL_WAKE_GRACE_MS, {
      onExpire: (w) => this.abandon(w),
      revoke: (w, granted) => this.revoke(w, granted),
    });
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
      if (nobodyWaits && want.weight <= (yield* this.free(pool))) return { done: yield* this.grantNew(pool.name, want) };
      w = this.waits.enqueue(req.pool, { ...want, state: "queued", offerExpiresAt: null }, req.agentId);
      this.waits.keep(w);
      yield* this.record("pool.queued", w, req.reason ?? null);
    }
    if (binding) this.watch();
    yield* this.serve(req.pool);
    // The caller is here right now: an offer made to it is claimed at once.
    if (w.req.state === "offered") return { done: yield* this.grantRequest(w, w.req) };
    if (req.waitMs <= 0) return { done: yield* this.refusal(w) };
    const mine = yield* this.waitOf(w);
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
      this.watch();
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
    yield* this.withdrawExcessOffers(req.pool);
    yield* this.serve(req.pool);
    return { configured: true, version: version + 1 };
  }

  async list(): Promise<PoolView[]> {
    return this.c.read(() => this.listTx());
  }

  *listTx(): Tx<PoolView[]> {
    const views: PoolView[] = [];
    for (const p of yield* all<PoolRow>("SELECT * FROM pools ORDER BY name")) views.push(yield* this.view(p));
    return views;
  }

  *waitsOf(agentId: string, includeDetached: boolean): Tx<Wait[]> {
    const out: Wait[] = [];
    for (const w of [...this.waits.of(agentId)]) {
      if (!includeDetached && !isBlocked(w)) continue;
      const wait = yield* this.waitOf(w);
      if (wait) out.push(wait);
    }
    return out;
  }

  *allWaits(): Tx<Wait[]> {
    const out: Wait[] = [];
    for (const w of [...this.waits.all()]) {
      const wait = yield* this.waitOf(w);
      if (wait) out.push(wait);
    }
    return out;
  }

  /**
   * A queued request waits for any holder to release or any request ahead to move on (ANY: one
   * may be enough). An offered or paused request waits for nobody: it can take its turn, or it
   * is out of line until it calls again.
   */
  private *waitOf(w: SlotWaiter): Tx<Wait | null> {
    if (w.req.state !== "queued") return null;
    const holders = yield* all<{ agent_id: string }>("SELECT agent_id FROM slots WHERE pool = ? ORDER BY acquired_at, rowid", w.key);
    const line = this.activeLine(w.key);
    const ahead = line.slice(0, Math.max(0, line.indexOf(w)));
    const edges = [...holders.map((h) => h.agent_id), ...ahead.map((x) => x.agentId!)].map((id) => ({ resource: w.key, waitsFor: id }));
    return { agentId: w.agentId!, kind: "slot", resource: w.key, any: true, blocked: isBlocked(w), edges };
  }

  /** Slots an agent holds, by pool (for list_agents and status). */
  async heldBy(agentId: string): Promise<string[]> {
    const rows = await this.c.read(() => all<{ pool: string }>("SELECT pool FROM slots WHERE agent_id = ? ORDER BY acquired_at", agentId));
    return rows.map((r) => r.pool);
  }

  /** Presence hook: an agent that departs releases its unbound slots and leaves every unbound line. */
  *releaseAllOf(agentId: string): Tx<void> {
    const slots = yield* all<SlotRow>("SELECT * FROM slots WHERE agent_id = ? AND pid IS NULL", agentId);
    for (const s of slots) yield* this.releaseSlot(s.token, "agent departed");
    for (const w of [...this.waits.all()]) if (w.agentId === agentId && !w.req.binding) yield* this.withdraw(w, "agent departed");
  }

  // ---- policy ----

  /** Hands free capacity to the line, earliest first: a blocked call is granted, an absent one offered. */
  private *serve(poolName: string): Tx<void> {
    if (this.waits.line(poolName).length === 0) return; // nobody to serve: the common release
    const pool = yield* this.find(poolName);
    if (!pool) return;
    let free = yield* this.free(pool);
    for (const w of this.activeLine(poolName)) {
      if (free <= 0) break;
      if (w.req.state !== "queued") continue; // an offer already holds its share
      if (w.req.weight > pool.capacity) continue; // can never fit (capacity was lowered): it blocks nobody
      if (w.req.weight > free) break; // a heavier request at the head is not overtaken
      free -= w.req.weight;
      if (isBlocked(w)) {
        const g = yield* this.grantRequest(w, w.req, true);
        this.waits.grant(w, g);
      } else {
        yield* this.offer(w, pool);
      }
    }
  }

  private *offer(w: SlotWaiter, pool: PoolRow): Tx<void> {
    w.req.state = "offered";
    w.req.offerExpiresAt = this.c.clock.now() + pool.offer_seconds * 1000;
    this.waits.touch(w);
    this.waits.keep(w);
    yield* this.record("pool.offered", w, w.req.reason, { offer_seconds: pool.offer_seconds });
    this.armOffer(w);
  }

  private armOffer(w: SlotWaiter): void {
    this.c.scheduler.at(`slot-offer:${w.token}`, w.req.offerExpiresAt!, () => this.offerLapsed(w));
  }

  /** An offer not claimed in time: the request is paused and the line served again. */
  private *offerLapsed(w: SlotWaiter): Tx<void> {
    if (this.waits.find(w.token, w.key) !== w || w.req.state !== "offered") return;
    w.req.state = "paused";
    w.req.offerExpiresAt = null;
    this.waits.touch(w);
    yield* this.record("pool.offer_expired", w, "the offer was not claimed in time");
    yield* this.record("pool.paused", w, "skipped until it calls again, then it rejoins at the tail");
    yield* this.serve(w.key);
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
    yield* this.serve(w.key);
  }

  /** A request leaves the line (it takes a slot, is withdrawn, or its agent or process is gone). */
  private unqueue(w: SlotWaiter): void {
    this.waits.remove(w);
    this.c.scheduler.cancel(`slot-offer:${w.token}`);
  }

  private *withdraw(w: SlotWaiter, reason: string): Tx<void> {
    const hadOffer = w.req.state === "offered";
    this.unqueue(w);
    yield* this.record("pool.released", w, reason, { withdrawn: true });
    if (hadOffer) yield* this.serve(w.key);
  }

  /** The wait queue's onExpire: a request whose agent has not called for POOL_WAKE_GRACE_MS leaves the line. */
  private *abandon(w: SlotWaiter): Tx<void> {
    yield* this.record("pool.released", w, "request abandoned: no call for an hour", { withdrawn: true });
    if (w.req.state === "offered") yield* this.serve(w.key);
  }

  /**
   * Turns a request into a held slot. The caller is either here (it claims its offer: the
   * request leaves the line now) or blocked (byQueue: the wait queue's grant answers it).
   */
  private *grantRequest(w: SlotWaiter, want: Omit<SlotWait, "state" | "offerExpiresAt">, byQueue = false): Tx<SlotGrant> {
    if (byQueue) this.c.scheduler.cancel(`slot-offer:${w.token}`);
    else this.unqueue(w);
    return yield* this.grantNew(w.key, want, w.since);
  }

  private *grantNew(poolName: string, want: Omit<SlotWait, "state" | "offerExpiresAt">, since?: number): Tx<SlotGrant> {
    const now = this.c.clock.now();
    const token = newToken();
    const b = want.binding;
    const expiresAt = b ? null : now + want.ttlMs;
    // The grant's journal revision is its fence: global, persisted and strictly increasing, so
    // strictly increasing per pool too, at no extra write on the path every slot takes.
    const fence = yield* this.journal.record("pool.granted", poolName, {
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
    else this.watch();
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
    yield* this.serve(slot.pool);
    return true;
  }

  /** An offer goes back to waiting, at its place in line. */
  private *unoffer(w: SlotWaiter): Tx<void> {
    w.req.state = "queued";
    w.req.offerExpiresAt = null;
    this.c.scheduler.cancel(`slot-offer:${w.token}`);
    this.waits.touch(w);
  }

  /** After capacity is lowered, offers beyond what is free go back to waiting (at their place). */
  private *withdrawExcessOffers(poolName: string): Tx<void> {
    const pool = yield* this.pool(poolName);
    const offered = this.activeLine(poolName).filter((w) => w.req.state === "offered");
    let over = (yield* this.held(poolName)) + offered.reduce((n, w) => n + w.req.weight, 0) - pool.capacity;
    for (const w of offered.reverse()) {
      if (over <= 0) break;
      over -= w.req.weight;
      yield* this.unoffer(w);
    }
  }

  // ---- process-bound slots ----

  /** Checks bound slots and requests every PROCESS_WATCH_MS while there are any. */
  private watch(): void {
    if (this.watching) return;
    this.watching = true;
    this.c.scheduler.at("pools:watch", this.c.clock.now() + PROCESS_WATCH_MS, () => this.watchTick());
  }

  /**
   * A shared store: slots bound on other machines are theirs to judge, but a machine whose
   * daemons have all been gone for hostGoneMs has nobody left to see its processes end. Its
   * bound slots are released then (and its bound requests withdrawn), or the team's budget
   * would stay held for good. Checked every HOST_CHECK_MS while such a binding exists.
   */
  private watchHosts(): void {
    if (this.watchingHosts || !this.c.store.shared) return;
    this.watchingHosts = true;
    this.c.scheduler.at("pools:hosts", this.c.clock.now() + HOST_CHECK_MS, () => this.hostsTick());
  }

  private *hostsTick(): Tx<void> {
    this.watchingHosts = false;
    const me = hostname();
    const seen = new Map((yield* all<{ host: string; seen_at: number }>("SELECT host, seen_at FROM hosts")).map((h) => [h.host, h.seen_at]));
    const gone = (b: ProcessBinding) => b.host !== undefined && b.host !== me && !((seen.get(b.host) ?? 0) > this.c.clock.now() - this.hostGoneMs);
    const reason = (b: ProcessBinding) => `no daemon of its machine ${b.host} has been seen for ${Math.round(this.hostGoneMs / 1000)} s`;
    let remaining = 0;
    for (const s of yield* all<SlotRow>("SELECT * FROM slots WHERE pid IS NOT NULL")) {
      const b = bindingOf(s)!;
      if (b.host === undefined || b.host === me) continue;
      if (gone(b)) yield* this.releaseSlot(s.token, reason(b));
      else remaining++;
    }
    for (const w of [...this.waits.all()]) {
      const b = w.req.binding;
      if (!b || b.host === undefined || b.host === me) continue;
      if (gone(b)) yield* this.withdraw(w, reason(b));
      else remaining++;
    }
    if (remaining > 0) this.watchHosts();
  }

  /** The "pools:watch" entry: reconciles, and watches on while anything bound remains. */
  private *watchTick(): Tx<void> {
    this.watching = false;
    if (yield* this.reconcile()) this.watch();
  }

  /** Releases what is bound to a group that is gone; true while anything bound remains. */
  private *reconcile(): Tx<boolean> {
    let bound = 0;
    // On a shared store only the process's own machine can tell whether it runs: another
    // machine would find no such pid and release the slot of a build still running there.
    const ours = (b: ProcessBinding) => !this.c.store.shared || b.host === undefined || b.host === hostname();
    for (const s of yield* all<SlotRow>("SELECT * FROM slots WHERE pid IS NOT NULL")) {
      const b = bindingOf(s)!;
      if (!ours(b)) continue;
      if (groupAlive(b)) bound++;
      else yield* this.releaseSlot(s.token, "process exited");
    }
    for (const w of [...this.waits.all()]) {
      if (!w.req.binding || !ours(w.req.binding)) continue;
      if (groupAlive(w.req.binding)) bound++;
      else yield* this.withdraw(w, "process exited");
    }
    return bound > 0;
  }

  // ---- reads ----

  private *view(p: PoolRow): Tx<PoolView> {
    const now = this.c.clock.now();
    const line = this.waits.line(p.name);
    return {
      pool: p.name,
      capacity: p.capacity,
      inUse: yield* this.held(p.name),
      offered: line.filter((w) => w.req.state === "offered").reduce((n, w) => n + w.req.weight, 0),
      queued: line.filter((w) => w.req.state !== "paused").length,
      version: p.version,
      offerSeconds: p.offer_seconds,
      holders: yield* this.holders(p.name, now),
      waiters: line.map((w) => queuedView(w, now)),
    };
  }

  private *refusal(w: SlotWaiter): Tx<SlotRefusal> {
    const now = this.c.clock.now();
    const pool = yield* this.pool(w.key);
    const active = this.activeLine(w.key);
    // A paused request is out of line until it calls again; then it rejoins at the tail.
    const i = w.req.state === "paused" ? active.length : active.indexOf(w);
    return {
      granted: false,
      pool: pool.name,
      capacity: pool.capacity,
      inUse: yield* this.held(pool.name),
      position: i + 1,
      wakeToken: w.token,
      holders: yield* this.holders(pool.name, now),
      ahead: active.slice(0, Math.max(0, i)).map((x) => queuedView(x, now)),
    };
  }

  private *holders(poolName: string, now: number): Tx<Holder[]> {
    const slots = yield* all<SlotRow>("SELECT * FROM slots WHERE pool = ? ORDER BY acquired_at, rowid", poolName);
    return slots.map((s) => {
      const h: Holder = { agentId: s.agent_id, reason: s.reason, weight: s.weight, heldSeconds: secondsSince(s.acquired_at, now) };
      if (s.pid !== null) h.pid = s.pid;
      return h;
    });
  }

  /** The requests in line that are not paused, earliest first. */
  private activeLine(poolName: string): SlotWaiter[] {
    return this.waits.line(poolName).filter((w) => w.req.state !== "paused");
  }

  private *held(poolName: string): Tx<number> {
    return (yield* get<{ n: number | null }>("SELECT SUM(weight) AS n FROM slots WHERE pool = ?", poolName))?.n ?? 0;
  }

  private *free(pool: PoolRow): Tx<number> {
    const offered = this.waits.line(pool.name).reduce((n, w) => n + (w.req.state === "offered" ? w.req.weight : 0), 0);
    return pool.capacity - (yield* this.held(pool.name)) - offered;
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
    // Process-bound holders and requests are checked against real liveness at once.
    this.c.scheduler.at("pools:watch", this.c.clock.now(), () => this.watchTick());
    this.watching = true;
  }

  /**
   * Another daemon changed the shared store (or the daemon starts): the cached pool rows go, and
   * every holder's expiry and every offer's deadline is armed here too (whichever daemon gets
   * there first acts).
   */
  *refresh(): Tx<void> {
    this.rows.clear();
    const me = hostname();
    for (const s of yield* all<SlotRow>("SELECT * FROM slots")) {
      if (s.expires_at !== null) this.armSlot(s.token, s.expires_at);
      const host = bindingOf(s)?.host;
      if (host !== undefined && host !== me) this.watchHosts();
    }
    for (const w of this.waits.all()) {
      if (w.req.state === "offered") this.armOffer(w);
      if (w.req.binding?.host !== undefined && w.req.binding.host !== me) this.watchHosts();
    }
  }

  private armSlot(token: string, expiresAt: number): void {
    this.c.scheduler.at(`slot:${token}`, expiresAt, () => this.slotLapsed(token));
  }

  private *slotLapsed(token: string): Tx<void> {
    const s = yield* get<SlotRow>("SELECT * FROM slots WHERE token = ?", token);
    if (s && s.expires_at !== null && s.expires_at <= this.c.clock.now()) yield* this.releaseSlot(token, "ttl expired");
  }

  private *record(kind: string, w: SlotWaiter, reason: string | null, more: Record<string, unknown> = {}): Tx<void> {
    yield* this.journal.record(kind, w.key, { agentId: w.agentId, reason, data: compactData({ weight: w.req.weight, request: w.token.slice(0, 8), ...more }) });
  }
}

function queuedView(w: SlotWaiter, now: number): Queued {
  const q: Queued = {
    agentId: w.agentId!,
    reason: w.req.reason,
    weight: w.req.weight,
    waitingSeconds: secondsSince(w.since, now),
    state: w.req.state,
    blocked: w.attached,
  };
  if (w.req.offerExpiresAt !== null) q.offerExpiresAt = w.req.offerExpiresAt;
  return q;
}

function bindingOf(r: { pid: number | null; pgid: number | null; pid_start: string | null }): ProcessBinding | null {
  if (r.pid === null || r.pgid === null || r.pid_start === null) return null;
  const at = r.pid_start.lastIndexOf("@");
  return at < 0 ? { pid: r.pid, pgid: r.pgid, startTime: r.pid_start } : { pid: r.pid, pgid: r.pgid, startTime: r.pid_start.slice(0, at), host: r.pid_start.slice(at + 1) };
}

/** The stored start time: with the machine's name after an @ (neither /proc's nor ps's form has one). */
function pidStart(b: ProcessBinding): string {
  return b.host === undefined ? b.startTime : `${b.startTime}@${b.host}`;
}

/**
 * A pid a slot may be bound to: a live process of the daemon's own user, not PID 1 and not the
 * daemon itself (neither would ever exit, so the slot would never be released).
 */
function checkPid(pid: number): ProcessBinding {
  if (pid === 1) throw new AirlockError("invalid_argument", "pid must not be 1: init never exits, so the slot would never be released");
  if (pid === process.pid) throw new AirlockError("invalid_argument", `pid must not be the daemon's own (${pid}): the slot would never be released`);
  const b = bindProcess(pid);
  if (!b) throw new AirlockError("invalid_argument", `pid must be a live process (got ${pid}, which is not running)`);
  const uid = processUid(pid);
  const mine = process.getuid?.();
  if (mine !== undefined && uid !== null && uid !== mine) {
    throw new AirlockError("invalid_argument", `pid must be a process of the daemon's own user (got ${pid}, owned by uid ${uid})`);
  }
  if (b.pgid === 0) throw new AirlockError("invalid_argument", `pid must be a user process (got ${pid}, a kernel thread)`);
  if (b.pgid === process.pid || b.pgid === 1) {
    throw new AirlockError("invalid_argument", `pid ${pid} is in the daemon's or init's process group, which never exits; run the work in its own group`);
  }
  return { ...b, host: hostname() };
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
