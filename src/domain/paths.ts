// Path claims: advisory locks over globs of repository paths, per room. A claim tells other
// agents that a region is being edited; files are never opened, only path strings are stored.
//
// - One claim_paths call is one claim: all its paths are granted together or none is.
// - Overlap is decided exactly by the glob engine, which also gives a witness (a concrete path
//   both patterns match). An agent never conflicts with its own claims.
// - First-writer-wins by default. With waitMs the request waits in its room's line (one line
//   per room in the one WaitQueue): a blocked request is granted once none of its paths overlaps
//   a live claim of another agent and no earlier *blocked* request overlaps it, so a later
//   overlapping request never jumps a waiting one, while one that overlaps nothing goes at once.
//   Detached waiters (their call timed out) keep their place under a wake_token but are passed
//   over, like lock waiters.
// - A room's claims are indexed in memory by their literal prefix segments (path-index.ts), so a
//   check against a thousand claims only runs the overlap product on those that could share a path.
// Every grant, denial, expiry, release, auto-release and forced release goes to the journal.
import { AirlockError } from "../errors.ts";
import { all, get, runLater, type Tx } from "../store/tx.ts";
import { assertTtl, type Ctx } from "./context.ts";
import { type Deadlock, type Wait, type WaitGraph, type WaitSource } from "./deadlock.ts";
import { RoomFences } from "./fences.ts";
import { type CheckBudget, checkBudget, type CompiledGlob, compileGlob, normalizePattern, overlap } from "./glob/index.ts";
import type { Journal } from "./journal.ts";
import { type Reconciled, reconcile } from "./mirror.ts";
import { type Claim, type Conflict, PathIndex } from "./path-index.ts";
import type { ClaimGranted, ClaimRefused, ClaimRequest, ClaimResult, ForceReleaseRequest, RenewResult } from "./path-requests.ts";
import { claimsSince, claimText, type PathClaimRow, toClaim } from "./path-rows.ts";
import { PathMoves } from "./path-moves.ts";
import { deadlineOf } from "./timers.ts";
import type { Presence } from "./presence.ts";
import { newToken } from "./tokens.ts";
import type { WaitQueue } from "./wait.ts";
import { isBlocked, type Outcome, type Waiter } from "./waiter.ts";

export const DEFAULT_ROOM = "default";
// Like a lock waiter: a timed-out caller re-polls at once in the recipes, and two minutes also
// covers an agent that thinks between calls. Detached waiters are passed over, so this is cheap.
export const PATH_WAKE_GRACE_MS = 120_000;
// The role register_agent must have given an agent for it to force-release others' claims.
export const LEAD_ROLE = "lead";
const QUEUED_REASON = "queued ahead of you";

interface PathWait {
  agentId: string;
  room: string;
  globs: CompiledGlob[];
  ttlMs: number;
  reason: string | null;
}

type PathWaiter = Waiter<PathWait, ClaimGranted>;

/**
 * Rooms named by an absolute directory (a main worktree, a directory outside any repository, or
 * one the daemon cannot read) follow that file system's case rule: macOS's default volumes are
 * case-insensitive, Linux's are not. Other rooms are case-sensitive, and that includes a
 * repository's origin room (`github.com/org/repo`): its clones may sit on any machine sharing a
 * store, and daemons on two platforms must decide one room alike; git's index is case-sensitive.
 */
export function roomIsCaseInsensitive(room: string): boolean {
  return room.startsWith("/") && process.platform === "darwin";
}

export class Paths implements WaitSource {
  readonly waits: WaitQueue<PathWait, ClaimGranted>;
  /** What the messages ask of claims: who has any, who holds a path, a claim's hand-over. */
  readonly moves: PathMoves;
  private readonly index = new PathIndex();
  private readonly fences: RoomFences;

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
    private readonly presence: Presence,
    private readonly graph: WaitGraph,
  ) {
    graph.register(this);
    this.fences = new RoomFences(() => c.inSharedOrder());
    // A request that stops waiting no longer holds back the overlapping ones behind it.
    this.waits = c.waitQueue<PathWait, ClaimGranted>("path", PATH_WAKE_GRACE_MS, {
      onDetach: (w) => this.serve(w.key),
      revoke: (w, g) => this.revoke(w, g),
      // Another daemon gets the patterns, and compiles them itself.
      codec: {
        encodeReq: (r) => ({ ...r, globs: r.globs.map((g) => g.source) }),
        decodeReq: (json) => {
          const r = json as Omit<PathWait, "globs"> & { globs: string[] };
          return { ...r, globs: this.compileAll(r.globs, r.room) };
        },
      },
    });
    this.moves = new PathMoves({
      c,
      journal,
      index: this.index,
      defaultRoom: DEFAULT_ROOM,
      placesOf: (agentId) => this.waits.of(agentId),
      compile: (paths, room) => this.compileAll(paths, room),
      live: (token) => this.live(token),
      arm: (claim) => this.arm(claim),
      serve: (room) => this.serve(room),
      fence: (room) => this.fences.next(room),
    });
  }

  /**
   * Another daemon changed the shared store: the index follows the rows, and only the claims
   * that are new or changed are compiled, indexed and armed again (mirror.ts); with `since`,
   * only the rows and deleted keys above that row version are read. What it did.
   */
  *refresh(since: number | null = null): Tx<Reconciled> {
    const { rows, gone, also } = yield* claimsSince(since);
    this.fences.learn(also); // another daemon may have granted in a room (a fence) too
    return reconcile(rows.map(toClaim), this.index.byToken, (c) => c.token, (c, m) => claimText(c) === claimText(m), (c) => this.indexed(c), (_, m) => this.index.remove(m), gone?.map(([token]) => token!));
  }

  /** Indexes the stored claims and arms their expiry (createKernel runs every primitive's load). */
  *load(): Tx<void> {
    for (const row of yield* all<PathClaimRow>("SELECT * FROM path_claims")) this.indexed(toClaim(row));
  }

  private indexed(claim: Claim): void {
    const caseInsensitive = roomIsCaseInsensitive(claim.room);
    this.index.add(claim, claim.paths.map((p) => compileGlob(p, { caseInsensitive })));
    this.arm(claim, true);
  }

  async claim(req: ClaimRequest, signal?: AbortSignal): Promise<ClaimResult> {
    assertTtl(req.ttlMs);
    const room = req.room ?? DEFAULT_ROOM;
    const globs = this.compileAll(req.paths, room); // throws before anything changes
    const want: PathWait = { agentId: req.agentId, room, globs, ttlMs: req.ttlMs, reason: req.reason ?? null };
    const waitMs = req.waitMs ?? 0;

    const self = this;
    const first = await this.c.tx(function* (): Tx<{ done: ClaimResult } | { wait: PathWaiter; blocked: Promise<Outcome<ClaimGranted>> }> {
      let w = self.waits.find(req.wakeToken, [room], req.agentId);
      if (w && !samePaths(w.req.globs, globs)) w = undefined; // another request: it starts its own place
      const conflicts = self.blockers(want, w, checkBudget());
      if (conflicts.length === 0) {
        if (w) self.waits.remove(w);
        return { done: yield* self.grant(want) };
      }
      if (waitMs <= 0) {
        // A poll with its wake_token is proof of interest: its place is kept for a fresh grace.
        if (w) self.waits.keep(w, true);
        return { done: yield* self.denied(want, conflicts, w) };
      }
      if (w) w.req = want;
      w ??= self.waits.enqueue([room], want, req.agentId);
      const deadlock = yield* self.graph.detect({ ...self.waitOf(w, conflicts), blocked: true });
      if (deadlock) {
        // The caller is the one answered: its call is the one in hand, and it has waited least.
        self.waits.remove(w);
        yield* self.journal.record("deadlock.detected", room, { agentId: req.agentId, data: { kind: "path", ...deadlock } });
        return { done: { granted: false, conflicts, deadlock } };
      }
      return { wait: w, blocked: self.waits.block(w, self.c.clock.now() + waitMs, signal) };
    });
    if ("done" in first) return first.done;

    const w = first.wait;
    const outcome = await first.blocked;
    if (outcome.kind === "granted") return outcome.value;
    return this.c.tx(function* (): Tx<ClaimResult> {
      const still = self.waits.find(w.token, [room]);
      // The region may have freed in the instant the wait ended: take it rather than refuse.
      if (outcome.kind === "timeout" && still) {
        const conflicts = self.blockers(w.req, w, checkBudget());
        if (conflicts.length === 0) {
          self.waits.remove(w);
          return yield* self.grant(w.req);
        }
        return yield* self.denied(w.req, conflicts, still);
      }
      return yield* self.denied(w.req, self.blockers(w.req, still, checkBudget()), still);
    });
  }

  async release(token: string): Promise<boolean> {
    const self = this;
    return this.c.tx(function* (): Tx<boolean> {
      const claim = yield* self.live(token);
      if (!claim) return false;
      yield* self.free(claim, "path.released", null);
      return true;
    });
  }

  async renew(token: string, ttlMs: number): Promise<RenewResult> {
    assertTtl(ttlMs);
    const self = this;
    return this.c.tx(function* (): Tx<RenewResult> {
      const claim = yield* self.live(token);
      if (!claim) return { renewed: false, error: "store: claim not found" };
      const expiresAt = self.c.clock.now() + ttlMs;
      yield* runLater("UPDATE path_claims SET expires_at = ? WHERE token = ?", expiresAt, token);
      claim.expiresAt = expiresAt;
      self.arm(claim);
      return { renewed: true, expiresAt };
    });
  }

  /**
   * What an edit hook asks: would these paths conflict with another agent's claims? Changes
   * nothing. `also` names more rooms to look in with the same paths (a repository's older room
   * names, and `default`: see src/mcp/tools/rooms.ts); conflicts found there name their room.
   */
  async check(q: {
    paths: readonly string[];
    room?: string | undefined;
    agentId?: string | undefined;
    also?: readonly string[] | undefined;
  }): Promise<{ clear: boolean; conflicts: Conflict[] }> {
    const room = q.room ?? DEFAULT_ROOM;
    const rooms = [...new Set([room, ...(q.also ?? [])])];
    // Compiled per room (a room's case rule), before anything is read; throws on a bad pattern.
    const compiled = rooms.map((r) => ({ r, globs: this.compileAll(q.paths, r) }));
    const self = this;
    // The index is in memory: no statement, but c.read still processes due expiries first. On a
    // shared store a row body (docs/cluster.md, "Reads of the path index in the shared order"):
    // every edit hook asks this, and it must not stop every daemon's row bodies; it brings the
    // claims' index, and the working trees' that check_paths reads next, up to the rows first.
    const body = function* (): Tx<{ clear: boolean; conflicts: Conflict[] }> {
      const conflicts = compiled.flatMap(({ r, globs }) => {
        const found = self.claimConflicts(r, globs, q.agentId, checkBudget());
        return r === room ? found : found.map((c) => ({ ...c, room: r }));
      });
      return { clear: conflicts.length === 0, conflicts };
    };
    return this.c.rowsOverlap ? this.c.rowRead("path_claims", room, body, ["path_claims", "worktrees"]) : this.c.read(body);
  }

  // Generators for the wait-for graph, though a path wait needs no statement (the index is in memory).
  *waitsOf(agentId: string, includeDetached: boolean): Tx<Wait[]> {
    return [...this.waits.of(agentId)].filter((w) => includeDetached || isBlocked(w)).map((w) => this.waitOf(w));
  }

  *allWaits(): Tx<Wait[]> {
    return [...this.waits.all()].map((w) => this.waitOf(w));
  }

  /** A request waits for every agent whose claim (or earlier blocked request) overlaps it. */
  private waitOf(w: PathWaiter, conflicts: Conflict[] = this.blockers(w.req, w, checkBudget())): Wait {
    const room = w.req.room;
    const edges = new Map<string, { resource: string; waitsFor: string }>();
    for (const c of conflicts) {
      const resource = room === DEFAULT_ROOM ? c.path : `${room}:${c.path}`;
      edges.set(`${c.heldBy}\u0000${resource}`, { resource, waitsFor: c.heldBy });
    }
    const resource = `${room === DEFAULT_ROOM ? "" : `${room}:`}${w.req.globs.map((g) => g.source).join(" ")}`;
    return { agentId: w.agentId!, kind: "path", resource, any: false, blocked: isBlocked(w), edges: [...edges.values()] };
  }

  /** Live claims, oldest first; of one room, or of every room. */
  async list(room?: string): Promise<Claim[]> {
    return this.c.rowRead("path_claims", room ?? "", () => this.listTx(room));
  }

  *listTx(room?: string): Tx<Claim[]> {
    const now = this.c.clock.now();
    const rows =
      room === undefined
        ? yield* all<PathClaimRow>("SELECT * FROM path_claims WHERE expires_at > ? ORDER BY acquired_at, room, fence", now)
        : yield* all<PathClaimRow>("SELECT * FROM path_claims WHERE room = ? AND expires_at > ? ORDER BY acquired_at, fence", room, now);
    return rows.map(toClaim);
  }

  /**
   * A lead frees another agent's claims in a room: all of them, or only those that name any of
   * the given paths. Refused for any agent not registered with role "lead".
   */
  async forceRelease(req: ForceReleaseRequest): Promise<{ released: number; tokens: string[] }> {
    const room = req.room ?? DEFAULT_ROOM;
    const wanted = req.paths && req.paths.length > 0 ? new Set(req.paths.map((p) => normalizePattern(p, { room }))) : undefined;
    const self = this;
    return this.c.tx(function* (): Tx<{ released: number; tokens: string[] }> {
      if ((yield* self.presence.find(req.agentId))?.role !== LEAD_ROLE) {
        throw new AirlockError(
          "invalid_argument",
          `force_release_paths needs an agent registered with role "${LEAD_ROLE}" (${req.agentId} is not); ask the lead, or the holder to release_paths`,
        );
      }
      const claims = self.index.claimsIn(room).filter(
        (cl) => cl.agentId === req.holder && (!wanted || cl.paths.some((p) => wanted.has(p))),
      );
      for (const claim of claims) yield* self.free(claim, "path.force_released", req.reason, req.agentId);
      return { released: claims.length, tokens: claims.map((cl) => cl.token) };
    });
  }

  /** Frees every claim of a departed agent (inside the departing transaction). */
  *releaseAllOf(agentId: string, reason: string | null = null): Tx<string[]> {
    const rows = yield* all<PathClaimRow>("SELECT * FROM path_claims WHERE agent_id = ? ORDER BY acquired_at, token", agentId);
    for (const row of rows) {
      const claim = this.index.find(row.room, row.token) ?? toClaim(row);
      yield* this.free(claim, "path.auto_released", reason);
    }
    // Its places in line go too: a departed agent must never be granted a region later.
    const gone = this.waits.removeWhere((w) => !w.attached && w.agentId === agentId);
    for (const room of new Set(gone.map((w) => w.key))) yield* this.serve(room);
    return rows.map((r) => r.token);
  }

  // ---- internals -------------------------------------------------------------------------

  private compileAll(paths: readonly string[], room: string): CompiledGlob[] {
    if (paths.length === 0) throw new AirlockError("invalid_argument", "missing paths");
    const caseInsensitive = roomIsCaseInsensitive(room);
    const seen = new Map<string, CompiledGlob>();
    for (const p of paths) {
      const g = compileGlob(normalizePattern(p, { room }), { caseInsensitive });
      if (!seen.has(g.source)) seen.set(g.source, g);
    }
    return [...seen.values()];
  }

  /**
   * The live claim with this token, if any. In a line body (and on SQLite) the index is the
   * rows, with no statement: only line bodies write claims, and a batch caught up before its
   * bodies ran (a release is then no round trip at all). In the shared order, the rows.
   */
  private *live(token: string): Tx<Claim | undefined> {
    if (!this.c.inSharedOrder()) {
      const claim = this.index.byToken.get(token);
      return claim && claim.expiresAt > this.c.clock.now() ? claim : undefined;
    }
    const row = yield* get<PathClaimRow>("SELECT * FROM path_claims WHERE token = ? AND expires_at > ?", token, this.c.clock.now());
    if (!row) return undefined;
    return this.index.find(row.room, token) ?? toClaim(row);
  }

  /** What stands in the way of `want` (held by waiter w, or a newcomer): others' claims, then earlier blocked waiters. */
  private blockers(want: PathWait, w: PathWaiter | undefined, budget: CheckBudget): Conflict[] {
    const out = this.claimConflicts(want.room, want.globs, want.agentId, budget);
    for (const other of this.waits.line(want.room)) {
      if (other === w) break; // only those ahead of w count
      if (!isBlocked(other) || other.agentId === want.agentId) continue;
      if (w !== undefined && other.order > w.order) break;
      for (const a of want.globs) {
        for (const b of other.req.globs) {
          const witness = overlap(a, b, budget);
          if (witness !== null) out.push({ path: a.source, heldBy: other.agentId!, heldPath: b.source, witness, reason: QUEUED_REASON });
        }
      }
    }
    return out;
  }

  /** Every (requested, held) pair that overlaps, against live claims of agents other than agentId. */
  private claimConflicts(room: string, globs: readonly CompiledGlob[], agentId: string | undefined, budget: CheckBudget): Conflict[] {
    return this.index.conflicts(room, globs, agentId, this.c.clock.now(), budget);
  }

  private *grant(want: PathWait): Tx<ClaimGranted> {
    const now = this.c.clock.now();
    const claim: Claim = {
      token: newToken(),
      room: want.room,
      agentId: want.agentId,
      paths: want.globs.map((g) => g.source),
      reason: want.reason,
      fence: yield* this.fences.next(want.room),
      acquiredAt: now,
      expiresAt: now + want.ttlMs,
    };
    yield* runLater(
      "INSERT INTO path_claims (token, room, agent_id, paths, reason, fence, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      claim.token,
      claim.room,
      claim.agentId,
      JSON.stringify(claim.paths),
      claim.reason,
      claim.fence,
      now,
      claim.expiresAt,
    );
    this.index.add(claim, want.globs);
    this.arm(claim);
    yield* this.journal.record("path.granted", claim.room, {
      agentId: claim.agentId,
      reason: claim.reason,
      data: { paths: claim.paths, fence: claim.fence, ttl_seconds: Math.round(want.ttlMs / 1000), claim: claim.token.slice(0, 8) },
    });
    return { granted: true, token: claim.token, room: claim.room, paths: claim.paths, fence: claim.fence, expiresAt: claim.expiresAt };
  }

  private *denied(want: PathWait, conflicts: Conflict[], w: PathWaiter | undefined): Tx<ClaimRefused> {
    yield* this.journal.record("path.denied", want.room, {
      agentId: want.agentId,
      reason: "overlap",
      data: {
        paths: want.globs.map((g) => g.source),
        held_by: [...new Set(conflicts.map((c) => c.heldBy))],
        conflicts: conflicts.map((c) => ({ path: c.path, held_by: c.heldBy, held_path: c.heldPath, witness: c.witness })),
      },
    });
    const r: ClaimRefused = { granted: false, conflicts };
    if (w && this.waits.find(w.token, [want.room])) r.wake = { token: w.token, position: this.waits.position(w) };
    return r;
  }

  /** Deletes the claim, records why, and serves the room's line. */
  private *free(claim: Claim, kind: string, reason: string | null, by?: string): Tx<void> {
    yield* runLater("DELETE FROM path_claims WHERE token = ?", claim.token);
    this.c.scheduler.cancel(`path:${claim.token}`);
    this.index.remove(claim);
    yield* this.journal.record(kind, claim.room, {
      agentId: by ?? claim.agentId,
      reason,
      data: { holder: claim.agentId, paths: claim.paths, claim: claim.token.slice(0, 8) },
    });
    yield* this.serve(claim.room);
  }

  /**
   * Whether a blocked request can be granted now. It runs inside someone else's release, which
   * must not fail: a request too costly to decide within its budget is simply not granted here
   * (its own call decides, and refuses, when its wait ends).
   */
  private clearFor(w: PathWaiter): boolean {
    try {
      return this.blockers(w.req, w, checkBudget()).length === 0;
    } catch (err) {
      if (err instanceof AirlockError) return false;
      throw err;
    }
  }

  /** Grants, in line order, every blocked request in the room that nothing stands in front of. */
  private *serve(room: string): Tx<void> {
    for (const w of [...this.waits.line(room)]) {
      if (!isBlocked(w)) continue;
      if (!this.clearFor(w)) continue;
      this.waits.grant(w, yield* this.grant(w.req));
    }
  }

  /** The granted call's client was gone: the claim is handed back and the waiter keeps its place, detached. */
  private *revoke(w: PathWaiter, g: ClaimGranted): Tx<void> {
    this.waits.reinstate(w);
    const claim = yield* this.live(g.token);
    if (claim) yield* this.free(claim, "path.released", "revoked: the waiting client had gone");
  }

  /** `fromRows`: read from rows another daemon may have written, whose timer fires it first (Scheduler.at's look). */
  private arm(claim: Claim, fromRows = false): void {
    const look = fromRows ? deadlineOf("SELECT expires_at AS at FROM path_claims WHERE token = ?", claim.token) : undefined;
    this.c.scheduler.at(`path:${claim.token}`, claim.expiresAt, () => this.expire(claim.token), look);
  }

  private *expire(token: string): Tx<void> {
    const row = yield* get<PathClaimRow>("SELECT * FROM path_claims WHERE token = ?", token);
    if (row && row.expires_at <= this.c.clock.now()) yield* this.free(this.index.find(row.room, row.token) ?? toClaim(row), "path.expired", null);
  }
}

function samePaths(a: readonly CompiledGlob[], b: readonly CompiledGlob[]): boolean {
  return a.length === b.length && a.every((g, i) => g.source === b[i]!.source);
}
