// Named locks with fair, blocking waits.
//
// A lock that frees (release, TTL expiry, holder's death) is handed, in the same transaction,
// to the earliest *attached* waiter; detached waiters (their call returned) are passed over
// but keep their place under their wake_token. A new caller never barges past an attached
// waiter: whenever a lock is free no attached waiter exists, because freeing hands it off.
// The journal gets lock.granted (hand-offs marked, with the fence), lock.renewed (the expiry
// moved), lock.released and lock.expired: one record per name, a group's names included, so
// a watcher of one resource sees every change to it.
// Taking a free lock and releasing one, when nobody on any daemon stands in its line, and
// renewing one, are row bodies (docs/cluster.md, "Scaling out"): on a shared store they overlap
// other daemons' calls on other names. Every other case (a line, a wake_token, a group, a lock
// held or past its expiry, a refusal) is a line body, as before; the row body leaves it there
// having changed nothing.
import { AirlockError } from "../errors.ts";
import { all, type Condition, get, run, runLater, type Tx } from "../store/tx.ts";
import { assertTtl, type Ctx, secondsSince } from "./context.ts";
import { type Wait, type WaitEdge, type WaitGraph, type WaitSource } from "./deadlock.ts";
import type { AcquireRequest, AcquireResult, Denied, Grant, GroupRequest, LockRow, LockView, MultiResult, RenewResult } from "./lock-types.ts";
import type { Journal } from "./journal.ts";
import { type HandedOver, refuseOwnHandOver } from "./primitive.ts";
import { rowsSince } from "./row-versions.ts";
import { deadlineOf } from "./timers.ts";
import { newToken } from "./tokens.ts";
import type { WaitQueue } from "./wait.ts";
import { isBlocked, type Outcome, type Waiter } from "./waiter.ts";

// A waiter whose call timed out re-polls straight away in the recipes; two minutes also covers
// an agent that thinks for a while between calls. Detached lock waiters are passed over, so
// holding their place longer costs nobody anything but memory.
export const LOCK_WAKE_GRACE_MS = 120_000;

export type { AcquireRequest, AcquireResult, Denied, Grant, GroupRequest, LockRow, LockView, MultiResult, RenewResult } from "./lock-types.ts";

interface LockWait {
  agentId: string;
  ttlMs: number;
}

interface GrantOptions {
  /** Only if nobody holds it live (an expired holder counts as gone). */
  ifFree?: boolean;
}

/** What a waiter is handed: one grant per name it waited for. */
type Grants = Record<string, Grant>;
type LockWaiter = Waiter<LockWait, Grants>;

export class Locks implements WaitSource {
  readonly waits: WaitQueue<LockWait, Grants>;

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
    private readonly graph: WaitGraph,
  ) {
    graph.register(this);
    const self = this;
    // A group that stops waiting no longer reserves its free names: they go to the next in line.
    this.waits = c.waitQueue<LockWait, Grants>("lock", LOCK_WAKE_GRACE_MS, {
      onDetach: function* (w) {
        if (w.keys.length > 1) for (const k of w.keys) yield* self.serve(k);
      },
      revoke: (w, grants) => self.revoke(w, grants),
    });
  }

  /**
   * Arms every held lock's expiry (createKernel runs every primitive's load); with `since` (a
   * catch-up by deltas), only the locks stamped above it, a released one's timer cancelled.
   */
  *load(since: number | null = null): Tx<void> {
    for (const row of yield* rowsSince<LockRow>("locks", since, "agent_id IS NOT NULL")) {
      if (row.agent_id === null) this.c.scheduler.cancel(`lock:${row.name}`);
      else this.arm(row.name, row.expires_at, true);
    }
  }

  async acquire(req: AcquireRequest, signal?: AbortSignal): Promise<AcquireResult> {
    assertTtl(req.ttlMs);
    if (req.wakeToken === undefined) {
      const tried = this.c.rowIfNobody(this.waits, "locks", req.name, (nobody) => this.grantAlone(req.name, req.agentId, req.ttlMs, nobody));
      const alone = tried && (await tried);
      if (alone) return alone;
    }
    const r = await this.take([req.name], req, signal);
    return "grants" in r ? r.grants[req.name]! : r;
  }

  /**
   * All-or-nothing over the deduplicated, byte-sorted names. With waitMs it blocks until every
   * name can be taken at once, in line on every name: fair on each, and never a partial hold.
   */
  async acquireMany(req: GroupRequest, signal?: AbortSignal): Promise<MultiResult> {
    const names = byteSortedUnique(req.names);
    const r = await this.take(names, { ...req, waitMs: req.waitMs ?? 0 }, signal);
    if (!("grants" in r)) return { locked: false, heldBy: r.heldBy, ...(r.wake ? { wake: r.wake } : {}), ...(r.deadlock ? { deadlock: r.deadlock } : {}) };
    const tokens: Record<string, string> = {};
    const fences: Record<string, number> = {};
    for (const name of names) {
      tokens[name] = r.grants[name]!.token;
      fences[name] = r.grants[name]!.fence;
    }
    return { locked: true, tokens, fences, expiresAt: r.grants[names[0]!]!.expiresAt };
  }

  /** One request over one or more names: take them all now, or wait in line on each. */
  private async take(names: string[], req: Omit<AcquireRequest, "name">, signal?: AbortSignal): Promise<{ grants: Grants } | Denied> {
    assertTtl(req.ttlMs);
    const want: LockWait = { agentId: req.agentId, ttlMs: req.ttlMs };
    const self = this;
    const first = await this.c.tx(function* (): Tx<{ done: { grants: Grants } | Denied } | { wait: LockWaiter; blocked: Promise<Outcome<Grants>> }> {
      let w = self.waits.find(req.wakeToken, names, req.agentId);
      if (names.length === 1) {
        // One name nobody ahead reserves: the grant's upsert takes it only if it is free, so
        // the holder is not looked up first (a statement less on every uncontended lock).
        const name = names[0]!;
        const g = self.unreserved(name, w) ? yield* self.grant(name, want.agentId, want.ttlMs, false, 1, { ifFree: true }) : null;
        if (g) {
          if (w) self.waits.remove(w);
          const grants: Grants = {};
          grants[name] = g;
          return { done: { grants } };
        }
      } else if (yield* self.grantable(names, w)) {
        if (w) self.waits.remove(w);
        return { done: { grants: yield* self.grantAll(names, want, false) } };
      }
      if (w) w.req = want;
      if (req.waitMs <= 0) {
        // A poll with its wake_token is proof of interest: its place is kept for a fresh grace.
        if (w) self.waits.keep(w, true);
        return { done: yield* self.denied(names, w) };
      }
      w ??= self.waits.enqueue(names, want, req.agentId);
      const deadlock = yield* self.graph.detect({ ...(yield* self.waitOf(w)), blocked: true });
      if (deadlock) {
        // The caller is the one answered: its call is the one in hand, and it has waited least.
        self.waits.remove(w);
        yield* self.journal.record("deadlock.detected", names.join(" "), { agentId: req.agentId, data: { kind: "lock", ...deadlock } });
        return { done: { ...(yield* self.denied(names, undefined)), deadlock } };
      }
      return { wait: w, blocked: self.waits.block(w, self.c.clock.now() + req.waitMs, signal) };
    });
    if ("done" in first) return first.done;

    const w = first.wait;
    const outcome = await first.blocked;
    if (outcome.kind === "granted") return { grants: outcome.value };
    return this.c.tx(function* (): Tx<{ grants: Grants } | Denied> {
      // The names may have freed in the same instant the wait ended: take them rather than
      // report them as held. A client that went away is never handed anything.
      if (outcome.kind === "timeout" && self.waits.find(w.token, names) && (yield* self.grantable(names, w))) {
        self.waits.remove(w);
        return { grants: yield* self.grantAll(names, w.req, false) };
      }
      return yield* self.denied(names, self.waits.find(w.token, names));
    });
  }

  /** By token; or, when no token is given, by agent_id equal to the holder (v1). */
  async release(name: string, token: string | undefined, agentId: string | undefined): Promise<boolean> {
    if (token === undefined && agentId === undefined) {
      throw new AirlockError("invalid_argument", "missing lock_token or agent_id");
    }
    const self = this;
    // Held by this token (or agent) and nobody in line: cleared in place, a row body, its one
    // statement (nobody in line one of its conditions) the last, with its entry naming the
    // holder it cleared, so a batch of releases commits in its flight. Else a line body decides
    // (a hand-off, a refusal, an expiry that is due). PostgreSQL only (a shared store), as row
    // bodies are: SQLite's RETURNING cannot name the FROM's columns.
    const tried = this.c.rowIfNobody(this.waits, "locks", name, function* (nobody): Tx<true | null> {
      const [by, holder] = heldLiveBy(token, agentId!);
      const sql = `${CLEAR} FROM (SELECT name AS held, agent_id AS holder FROM locks WHERE name = ?) o WHERE locks.name = o.held AND ${by} AND ${nobody.sql} RETURNING o.holder`;
      const entry = { data: "NULL", args: [], agentId: "holder" };
      if (!(yield* self.journal.lastRecorded("lock.released", name, entry, {}, sql, name, holder, self.c.clock.now(), ...nobody.args))) return null;
      self.timer(name, null);
      return true;
    });
    if (tried && (await tried)) return true;
    return this.c.tx(function* (): Tx<boolean> {
      const row = yield* self.holder(name);
      if (!row) return false;
      if (token !== undefined ? row.token !== token : row.agent_id !== agentId) return false;
      yield* self.free(name, "lock.released", row.agent_id, null);
      return true;
    });
  }

  async renew(name: string, token: string | undefined, agentId: string | undefined, ttlMs: number): Promise<RenewResult> {
    if (token === undefined && agentId === undefined) {
      throw new AirlockError("invalid_argument", "missing lock_token or agent_id");
    }
    assertTtl(ttlMs);
    const self = this;
    // Held live by this token (or agent): the expiry moves in place, a row body (the lines are
    // not read: a renewal hands nothing on), its UPDATE the body's last statement with the entry
    // going with it, so a batch of renewals commits in the flight that carries it (docs/cluster.md,
    // "A row batch in one flight"). Else a line body says why not.
    const moved =
      this.c.rowsOverlap &&
      (await this.c.rowTx("locks", name, function* (): Tx<RenewResult | null> {
        const now = self.c.clock.now();
        const expiresAt = now + ttlMs;
        const [by, holder] = heldLiveBy(token, agentId!);
        const entry = { data: `'{"fence":' || fence || ?`, args: [`,"expires_at":${expiresAt}}`], agentId: "agent_id" };
        const sql = `UPDATE locks SET expires_at = ? WHERE name = ? AND ${by} RETURNING agent_id, fence`;
        if (!(yield* self.journal.lastRecorded("lock.renewed", name, entry, {}, sql, expiresAt, name, holder, now))) return null;
        self.timer(name, expiresAt);
        return { renewed: true, expiresAt };
      }));
    if (moved) return moved;
    return this.c.tx(function* (): Tx<RenewResult> {
      const row = yield* self.holder(name);
      if (!row) return { renewed: false, error: "store: lock not found" };
      if (token !== undefined && row.token !== token) return { renewed: false, error: "store: lock not owned by supplied token" };
      if (token === undefined && row.agent_id !== agentId) return { renewed: false, error: "store: lock not owned by supplied agent_id" };
      const expiresAt = self.c.clock.now() + ttlMs;
      yield* runLater("UPDATE locks SET expires_at = ? WHERE name = ?", expiresAt, name);
      return yield* self.renewed(name, row, expiresAt);
    });
  }

  /**
   * What follows moving a holder's expiry: its timer, and the record.
   */
  private *renewed(name: string, row: { agent_id: string; fence: number }, expiresAt: number): Tx<RenewResult> {
    this.timer(name, expiresAt);
    yield* this.journal.record("lock.renewed", name, { agentId: row.agent_id, data: { fence: row.fence, expires_at: expiresAt } });
    return { renewed: true, expiresAt };
  }

  /**
   * Frees every lock the agent holds (its presence ended), handing each to its next waiter.
   * Part of the departing transaction.
   */
  *releaseAllOf(agentId: string): Tx<string[]> {
    const names = yield* all<{ name: string }>("SELECT name FROM locks WHERE agent_id = ? ORDER BY name", agentId);
    for (const { name } of names) yield* this.free(name, "lock.released", agentId, "holder departed");
    // Its places in line go too: a dead agent must never be handed a lock later.
    this.waits.removeWhere((w) => !w.attached && w.agentId === agentId);
    return names.map((n) => n.name);
  }

  async list(): Promise<LockView[]> {
    return this.c.readLines(() => this.listTx());
  }

  *listTx(): Tx<LockView[]> {
    const now = this.c.clock.now();
    const rows = yield* all<LockRow>("SELECT * FROM locks WHERE expires_at > ? ORDER BY name", now);
    return rows.map((row) => ({
      ...row,
      waiters: this.waits.line(row.name).map((w) => ({
        agentId: w.agentId!,
        attached: w.attached,
        waitingSeconds: secondsSince(w.since, now),
      })),
    }));
  }

  *waitsOf(agentId: string, includeDetached: boolean): Tx<Wait[]> {
    const out: Wait[] = [];
    for (const w of [...this.waits.of(agentId)].filter((w) => includeDetached || isBlocked(w))) out.push(yield* this.waitOf(w));
    return out;
  }

  *allWaits(): Tx<Wait[]> {
    const out: Wait[] = [];
    for (const w of [...this.waits.all()]) out.push(yield* this.waitOf(w));
    return out;
  }

  /** Who stands in w's way on each of its names: the holder, or a blocked waiter ahead that reserves it. */
  private *waitOf(w: LockWaiter): Tx<Wait> {
    const edges: WaitEdge[] = [];
    for (const name of w.keys) {
      const h = yield* this.holder(name);
      const ahead = h ? undefined : this.waits.firstAttached(name);
      const by = h?.agent_id ?? (ahead && ahead !== w && ahead.order < w.order ? ahead.agentId : undefined);
      if (by !== undefined) edges.push({ resource: name, waitsFor: by });
    }
    return { agentId: w.agentId!, kind: "lock", resource: w.keys.join(" + "), any: false, blocked: isBlocked(w), edges };
  }

  async heldBy(agentId: string): Promise<string[]> {
    return this.c.rowRead("locks", "", () => this.heldByTx(agentId));
  }

  *heldByTx(agentId: string): Tx<string[]> {
    const now = this.c.clock.now();
    const rows = yield* all<{ name: string }>("SELECT name FROM locks WHERE agent_id = ? AND expires_at > ? ORDER BY name", agentId, now);
    return rows.map((r) => r.name);
  }

  /** Whether the agent holds a lock or has a place in a lock's line (the messages' "seen"). */
  *knows(agentId: string): Tx<boolean> {
    for (const _ of this.waits.of(agentId)) return true;
    return (yield* get("SELECT 1 AS x FROM locks WHERE agent_id = ? LIMIT 1", agentId)) !== null;
  }

  /** Who holds the lock now (send_message's `about: lock:NAME`). */
  *holders(name: string): Tx<string[]> {
    const h = yield* this.holder(name);
    return h ? [h.agent_id] : [];
  }

  /**
   * hand_over: the lock held with this token goes to toAgent in place, with a new token and the
   * next fence; its expiry stays. Null when no live lock has this token.
   */
  *handOver(token: string, toAgent: string): Tx<HandedOver | null> {
    const row = yield* get<LockRow>("SELECT * FROM locks WHERE token = ? AND expires_at > ?", token, this.c.clock.now());
    if (!row) return null;
    refuseOwnHandOver(row.agent_id, toAgent, `lock:${row.name}`);
    const next = newToken();
    const moved = (yield* get<{ fence: number }>(
      "UPDATE locks SET agent_id = ?, token = ?, fence = fence + 1, acquired_at = ? WHERE name = ? RETURNING fence",
      toAgent,
      next,
      this.c.clock.now(),
      row.name,
    ))!;
    yield* this.journal.record("lock.handed_over", row.name, { agentId: row.agent_id, data: { to: toAgent, fence: moved.fence, expires_at: row.expires_at } });
    return { about: `lock:${row.name}`, from: row.agent_id, token: next, fence: moved.fence };
  }

  /** The live holder row, if any. */
  private *holder(name: string): Tx<LockRow | null> {
    return yield* get<LockRow>("SELECT * FROM locks WHERE name = ? AND expires_at > ?", name, this.c.clock.now());
  }

  /**
   * Takes the row over in place; its fence goes up by one (a new name starts at 1). `ifFree`:
   * only if nobody holds it live (else null, and nothing changed).
   */
  private *grant(name: string, agentId: string, ttlMs: number, handOff: boolean, group: number, o: GrantOptions = {}): Tx<Grant | null> {
    const now = this.c.clock.now();
    const token = newToken();
    const expiresAt = now + ttlMs;
    const upsert = `INSERT INTO ${LOCK_COLUMNS} VALUES (?, ?, ?, 1, ?, ?) ${TAKE_ON_CONFLICT}`;
    const row = o.ifFree
      ? yield* get<{ fence: number }>(`${upsert} WHERE locks.expires_at IS NULL OR locks.expires_at <= ? RETURNING fence`, name, agentId, token, now, expiresAt, now)
      : yield* get<{ fence: number }>(`${upsert} RETURNING fence`, name, agentId, token, now, expiresAt);
    if (!row) return null;
    const fence = row.fence;
    this.timer(name, expiresAt);
    const data: Record<string, unknown> = { fence, expires_at: expiresAt };
    if (handOff) data.hand_off = true;
    if (group > 1) data.group = group;
    yield* this.journal.record("lock.granted", name, { agentId, data });
    return { locked: true, token, fence, expiresAt };
  }

  /**
   * A name taken by a row body (rowIfNobody): only if it was released (an expired holder not yet
   * expired counts as holding) and no stored place stands in its line (a group's reservation
   * included, on a name never taken too), both conditions of its one upsert, the body's last
   * statement, whose entry takes the fence from the row. An INSERT of a SELECT, not of VALUES:
   * with someone in line the SELECT has no row, so nothing is inserted or taken over. Null when
   * it took nothing: the line body decides.
   */
  private *grantAlone(name: string, agentId: string, ttlMs: number, nobody: Condition): Tx<Grant | null> {
    const now = this.c.clock.now();
    const token = newToken();
    const expiresAt = now + ttlMs;
    const sql = `INSERT INTO ${LOCK_COLUMNS} SELECT ?, ?, ?, 1, CAST(? AS BIGINT), CAST(? AS BIGINT) WHERE ${nobody.sql} ${TAKE_ON_CONFLICT} WHERE locks.expires_at IS NULL RETURNING fence`;
    // The same text as grant's entry: {"fence":N,"expires_at":T}.
    const entry = { data: `'{"fence":' || fence || ?`, args: [`,"expires_at":${expiresAt}}`] };
    const row = yield* this.journal.lastRecorded<{ fence: number }>("lock.granted", name, entry, { agentId }, sql, name, agentId, token, now, expiresAt, ...nobody.args);
    if (!row) return null;
    this.timer(name, expiresAt);
    return { locked: true, token, fence: row.fence, expiresAt };
  }

  /** Whether no blocked waiter ahead of w (or of a newcomer) reserves the name. */
  private unreserved(name: string, w: LockWaiter | undefined): boolean {
    const f = this.waits.firstAttached(name);
    return f === undefined || f === w || (w !== undefined && w.order < f.order);
  }

  /**
   * A name can be taken by `w` (or by a newcomer, when w is undefined) when nobody holds it and
   * no waiter ahead of w is blocked on it: a free name with a blocked waiter is reserved for
   * that waiter (a group still waiting for its other names), so nobody barges past it.
   */
  private *grantable(names: readonly string[], w: LockWaiter | undefined): Tx<boolean> {
    // A loop rather than every(): the holder look-up yields. It stops at the first name that
    // cannot be taken, as every() did.
    for (const name of names) {
      if (yield* this.holder(name)) return false;
      if (!this.unreserved(name, w)) return false;
    }
    return true;
  }

  private *grantAll(names: readonly string[], want: LockWait, handOff: boolean): Tx<Grants> {
    const out: Grants = {};
    for (const name of names) out[name] = (yield* this.grant(name, want.agentId, want.ttlMs, handOff, names.length))!;
    return out;
  }

  /** Clears the holder (the row keeps its fence), journals why, and hands the lock on. */
  private *free(name: string, kind: "lock.released" | "lock.expired", holder: string, reason: string | null): Tx<void> {
    // A single blocked waiter takes the row over at once (the grant rewrites it): no need to
    // clear it first on the path every waiter waits on.
    const next = this.waits.firstAttached(name);
    if (next === undefined || next.keys.length > 1) yield* run(`${CLEAR} WHERE name = ?`, name);
    yield* this.journal.record(kind, name, { agentId: holder, reason });
    this.timer(name, null);
    yield* this.serve(name, true);
  }

  /**
   * Hands a free name to the earliest blocked waiter: a single waiter takes it; a group takes
   * all its names once each is free and it is the earliest blocked waiter on each.
   * (`justFreed`: the caller has just cleared the holder, so it need not be looked up again.)
   */
  private *serve(name: string, justFreed = false): Tx<void> {
    if (!justFreed && (yield* this.holder(name))) return;
    const next = this.waits.firstAttached(name);
    if (!next) return;
    if (!(justFreed && next.keys.length === 1) && !(yield* this.grantable(next.keys, next))) return;
    this.waits.grant(next, yield* this.grantAll(next.keys, next.req, true));
  }

  /** The granted call's client was gone: the locks pass on, and it keeps its place, detached. */
  private *revoke(w: LockWaiter, grants: Grants): Tx<void> {
    this.waits.reinstate(w);
    for (const [name, g] of Object.entries(grants)) {
      if ((yield* this.holder(name))?.token === g.token) yield* this.free(name, "lock.released", w.agentId!, "the waiter's client left before the hand-off reached it");
    }
  }

  private *denied(names: readonly string[], w: LockWaiter | undefined): Tx<Denied> {
    // The first name that cannot be taken: held, or reserved for a blocked group.
    for (const name of names) {
      const h = yield* this.holder(name);
      const reservedFor = h ? undefined : this.waits.firstAttached(name);
      if (!h && (!reservedFor || reservedFor === w)) continue;
      const d: Denied = { locked: false, heldBy: h?.agent_id ?? reservedFor!.agentId!, expiresAt: h?.expires_at ?? this.c.clock.now() };
      if (w) d.wake = { token: w.token, position: this.waits.position(w, name) };
      return d;
    }
    // Only for a caller that went away while the names freed; its answer is dropped.
    const d: Denied = { locked: false, heldBy: "", expiresAt: this.c.clock.now() };
    if (w) d.wake = { token: w.token, position: this.waits.position(w) };
    return d;
  }

  /** `fromRows`: read from rows another daemon may have written, whose timer fires it first (Scheduler.at's look). */
  private arm(name: string, expiresAt: number, fromRows = false): void {
    const look = fromRows ? deadlineOf("SELECT expires_at AS at FROM locks WHERE name = ? AND agent_id IS NOT NULL", name) : undefined;
    this.c.scheduler.at(`lock:${name}`, expiresAt, () => this.expire(name), look);
  }

  /**
   * A holder's expiry timer, armed (or, with null, cancelled) as the transaction sets it: at
   * once in a line body, where a hand-off later in the same transaction arms the next holder's;
   * after the commit in a row body, which changes nothing in memory before it (it may roll back
   * and run again).
   */
  private timer(name: string, expiresAt: number | null): void {
    const set = () => (expiresAt === null ? this.c.scheduler.cancel(`lock:${name}`) : this.arm(name, expiresAt));
    if (this.c.inSharedOrder()) this.c.store.afterCommit(set);
    else set();
  }

  private *expire(name: string): Tx<void> {
    const row = yield* get<LockRow>("SELECT * FROM locks WHERE name = ? AND agent_id IS NOT NULL", name);
    if (row && row.expires_at <= this.c.clock.now()) yield* this.free(name, "lock.expired", row.agent_id, "ttl elapsed");
  }
}

/** Deduplicated names in byte order of their UTF-8 encoding (Go's string order). */
export function byteSortedUnique(names: string[]): string[] {
  return [...new Set(names)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/**
 * A row body's condition that the lock is held live by this token or, without one, by this
 * agent (v1): the SQL, which takes the holder and then now, and the holder.
 */
function heldLiveBy(token: string | undefined, agentId: string): [string, string] {
  return token !== undefined ? ["token = ? AND expires_at > ?", token] : ["agent_id = ? AND expires_at > ?", agentId];
}

/** The table and columns of a lock's row written whole (its VALUES or its SELECT follow). */
const LOCK_COLUMNS = "locks (name, agent_id, token, fence, acquired_at, expires_at)";
/** A name already in the table taken over: its fence up by one (a new name starts at 1); a WHERE may follow. */
const TAKE_ON_CONFLICT =
  "ON CONFLICT(name) DO UPDATE SET agent_id = excluded.agent_id, token = excluded.token, fence = locks.fence + 1, " +
  "acquired_at = excluded.acquired_at, expires_at = excluded.expires_at";

/** Clears a lock's holder; its row keeps the fence. */
const CLEAR = "UPDATE locks SET agent_id = NULL, token = NULL, acquired_at = NULL, expires_at = NULL";
