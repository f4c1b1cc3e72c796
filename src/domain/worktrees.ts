// Working trees (SPEC §13, docs/worktrees.md): what each agent's checkout holds uncommitted, as its
// hooks report it, so that an overlap shows even where nobody claimed anything.
// - A report (agent, room) replaces `dirty` (at most MAX_DIRTY paths) and adds to `touched` (the
//   paths the agent edited itself); a touched path leaves when it is no longer dirty (not listed,
//   nor under a listed directory: git lists a new directory as `dir/`).
// - check_paths asks editedBy: other agents' touched paths that overlap the paths asked about.
//   They are kept in the claims' own index (path-index.ts), one entry per (agent, room) whose
//   patterns are its touched paths made literal (glob characters escaped), so a check against a
//   thousand touched paths runs the overlap engine only on those that could share a path.
// - It lapses with the agent (a departure drops its rows), and a row nobody refreshed for
//   WORKTREE_TTL_MS goes too: the hooks' agents need not register, so no heartbeat would tell.
// Journal: worktree.reported (when what is reported changed, not at every refresh) and
// worktree.dropped (departed, unregistered or expired).
import { AirlockError } from "../errors.ts";
import { all, get, last, type Read, runLater, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import { checkBudget, compileGlob, MAX_PATTERN_LENGTH, normalizePattern } from "./glob/index.ts";
import type { Journal } from "./journal.ts";
import { horizonDelta, horizonReads, reconcile } from "./mirror.ts";
import { type Claim, type Conflict, PathIndex } from "./path-index.ts";
import { roomIsCaseInsensitive } from "./paths.ts";
import type { DepartureReason } from "./presence.ts";

// SPEC §13: a report names what one checkout holds uncommitted; a tree with more is summarised
// by its first 2,000 paths (the hooks cap `git status` there too).
export const MAX_DIRTY = 2000;
// The hooks refresh a report at every edit and turn (stop); a session silent for two hours is
// most likely gone, and its next edit reports again.
export const WORKTREE_TTL_MS = 2 * 3600 * 1000;
export const MAX_BRANCH_LENGTH = 256;
// A commit id: 40 hex digits for SHA-1, 64 for SHA-256; a little room for an abbreviation's suffix.
export const MAX_HEAD_LENGTH = 80;
// At most this many touched paths are named in a worktree.reported record (the count always is).
const JOURNAL_PATHS = 20;

export interface ReportRequest {
  agentId: string;
  room: string;
  branch?: string | undefined;
  head?: string | undefined;
  dirty: readonly string[];
  touched: readonly string[];
}

export interface Worktree {
  agentId: string;
  room: string;
  branch: string | null;
  head: string | null;
  dirty: string[];
  /** Touched paths, still dirty, each with when it was first reported touched (ms). */
  touched: { path: string; since: number }[];
  reportedAt: number;
  expiresAt: number;
}

export interface EditedBy {
  path: string;
  agentId: string;
  branch: string | null;
  since: number;
}

interface WorktreeRow {
  agent_id: string;
  room: string;
  branch: string | null;
  head: string | null;
  dirty: string;
  touched: string;
  reported_at: number;
  expires_at: number;
}

const GLOB_CHAR = /[*?[\]{}\\]/g;

/** A reported path as a pattern that matches only itself (and what is below it, as any literal does). */
export function literalPattern(path: string): string {
  return path.replace(GLOB_CHAR, (c) => `\\${c}`);
}

export class Worktrees {
  /** Touched paths by room, one index entry per (agent, room); the token is keyOf(agent, room). */
  private readonly index = new PathIndex();
  /** Each report, with its touched paths by the pattern the index holds them under. */
  private readonly trees = new Map<string, Worktree & { byPattern: Map<string, { path: string; since: number }> }>();

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {}

  *load(): Tx<void> {
    for (const row of yield* all<WorktreeRow>("SELECT * FROM worktrees")) this.remember(toWorktree(row), true);
  }

  /**
   * A shared store: what a delta of the reports reads (Primitive.horizon: row bodies write
   * them), from the horizon the last one reached (null: every row).
   */
  reads(since: number | null): Read<unknown[]>[] {
    return horizonReads("worktrees", since);
  }

  /**
   * Memory follows the rows reads(since) answered, and only the reports that are new or changed
   * are indexed again (mirror.ts): the horizon the next delta starts from.
   */
  *apply(answers: readonly unknown[], since: number | null): Tx<number> {
    const { rows, gone, horizon } = horizonDelta<WorktreeRow>(since, answers);
    const goneKeys = gone?.map(([agentId, room]) => keyOf(agentId!, room!));
    reconcile(rows.map(toWorktree), this.trees, (t) => keyOf(t.agentId, t.room), (t, m) => treeText(t) === treeText(m), (t) => this.remember(t, true), (key) => this.forget(key), goneKeys);
    return horizon;
  }

  async report(req: ReportRequest): Promise<Worktree> {
    const dirty = checkPaths("dirty", req.dirty, req.room, MAX_DIRTY);
    const touched = checkPaths("touched", req.touched, req.room, MAX_DIRTY);
    if (req.branch !== undefined && req.branch.length > MAX_BRANCH_LENGTH) {
      throw new AirlockError("invalid_argument", `branch must be at most ${MAX_BRANCH_LENGTH} characters (got ${req.branch.length}); nothing was reported`);
    }
    if (req.head !== undefined && !/^[0-9a-f]{4,80}$/i.test(req.head)) {
      throw new AirlockError("invalid_argument", `head must be a commit id, 4 to ${MAX_HEAD_LENGTH} hex digits (got ${JSON.stringify(req.head.slice(0, 90))}); nothing was reported`);
    }
    const self = this;
    // On a shared store a report is a row body (docs/cluster.md, "Working-tree reports beside
    // the order"): the tree computed as below, from the report this daemon remembers, written by
    // one statement whose condition is that the row still says what memory does and has not
    // lapsed (a lapse not run yet, maybe another daemon's to fire), or, when memory holds none,
    // that there is no row; the body's last, its journal entry going with it. One that changes
    // nothing moves only reported_at and expires_at (the hooks send one at every edit, most of
    // them the same). When the row is not what memory says (another daemon's report not read
    // here yet, a lapse), the line body decides, from the row.
    if (this.c.rowsOverlap) {
      const wrote = await this.c.rowTx("worktrees", keyOf(req.agentId, req.room), function* (): Tx<Worktree | null> {
        const before = self.trees.get(keyOf(req.agentId, req.room));
        const now = self.c.clock.now();
        const tree = treeOf(req, dirty, touched, before, now);
        if (before && !changed(before, tree)) {
          const args = [tree.reportedAt, tree.expiresAt, req.agentId, req.room, now, before.branch, before.head, JSON.stringify(before.dirty), touchedText(before)];
          if (!(yield* last([], SAME_REPORT, ...args))) return null;
        } else {
          const [sql, args] = before
            ? [CHANGED_REPORT, [...rowArgs(tree).slice(2), req.agentId, req.room, now, before.branch, before.head, JSON.stringify(before.dirty), touchedText(before)]]
            : [FIRST_REPORT, rowArgs(tree)];
          const entry = { data: "?", args: [JSON.stringify(reportedData(tree))] };
          if (!(yield* self.journal.lastRecorded("worktree.reported", tree.room, entry, { agentId: tree.agentId }, sql, ...args))) return null;
        }
        self.c.store.afterCommit(() => self.remember(tree));
        return tree;
      });
      if (wrote) return wrote;
    }
    return this.c.tx(function* (): Tx<Worktree> {
      const now = self.c.clock.now();
      // On SQLite memory is the rows (a line body caught up first; a lapse due ran before). On a
      // shared store row bodies of any daemon write reports too, and this daemon reads another's
      // only at its next look: the row says what the report before this one was.
      const before = self.c.rowsOverlap ? yield* self.stored(req.agentId, req.room, now) : self.trees.get(keyOf(req.agentId, req.room));
      const tree = treeOf(req, dirty, touched, before, now);
      yield* runLater(
        "INSERT INTO worktrees (agent_id, room, branch, head, dirty, touched, reported_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) " +
          "ON CONFLICT (agent_id, room) DO UPDATE SET branch = excluded.branch, head = excluded.head, dirty = excluded.dirty, " +
          "touched = excluded.touched, reported_at = excluded.reported_at, expires_at = excluded.expires_at",
        ...rowArgs(tree),
      );
      self.remember(tree);
      if (!before || changed(before, tree)) yield* self.journal.record("worktree.reported", tree.room, { agentId: tree.agentId, data: reportedData(tree) });
      return tree;
    });
  }

  /** The live report of an agent in a room, as its row says it. */
  private *stored(agentId: string, room: string, now: number): Tx<Worktree | undefined> {
    const row = yield* get<WorktreeRow>("SELECT * FROM worktrees WHERE agent_id = ? AND room = ? AND expires_at > ?", agentId, room, now);
    return row ? toWorktree(row) : undefined;
  }

  /** Live reports, of one room or of every room, by room then agent. */
  async list(room?: string): Promise<Worktree[]> {
    return this.c.rowRead("worktrees", room ?? "", () => this.listTx(room));
  }

  *listTx(room?: string): Tx<Worktree[]> {
    const now = this.c.clock.now();
    const rows =
      room === undefined
        ? yield* all<WorktreeRow>("SELECT * FROM worktrees WHERE expires_at > ? ORDER BY room, agent_id", now)
        : yield* all<WorktreeRow>("SELECT * FROM worktrees WHERE room = ? AND expires_at > ? ORDER BY agent_id", room, now);
    return rows.map(toWorktree);
  }

  /**
   * Other agents' touched, still-dirty paths in the room that overlap any of `paths`, oldest
   * first. In memory: the caller's transaction (check_paths' read) caught up with other daemons.
   */
  editedBy(room: string, paths: readonly string[], agentId: string | undefined): EditedBy[] {
    const caseInsensitive = roomIsCaseInsensitive(room);
    const globs = paths.map((p) => compileGlob(normalizePattern(p, { room }), { caseInsensitive }));
    let found: Conflict[];
    try {
      found = this.index.conflicts(room, globs, agentId, this.c.clock.now(), checkBudget());
    } catch (err) {
      // Over the overlap budget: the claims' answer stands, without this advisory part.
      if (err instanceof AirlockError) return [];
      throw err;
    }
    const out = new Map<string, EditedBy>();
    for (const c of found) {
      const tree = this.trees.get(keyOf(c.heldBy, room));
      const t = tree?.byPattern.get(c.heldPath);
      if (!tree || !t) continue;
      out.set(`${c.heldBy}\u0000${t.path}`, { path: t.path, agentId: c.heldBy, branch: tree.branch, since: t.since });
    }
    return [...out.values()].sort((a, b) => a.since - b.since || a.path.localeCompare(b.path));
  }

  /** A departed agent's reports go (inside the departing transaction). */
  *depart(agentId: string, reason: DepartureReason): Tx<void> {
    for (const row of yield* all<WorktreeRow>("SELECT * FROM worktrees WHERE agent_id = ?", agentId)) {
      yield* this.drop(toWorktree(row), reason);
    }
  }

  /** Whether this agent has a report (what the messages call "seen"). */
  *knows(agentId: string): Tx<boolean> {
    return (yield* get("SELECT 1 AS x FROM worktrees WHERE agent_id = ? LIMIT 1", agentId)) !== null;
  }

  // ---- internals -------------------------------------------------------------------------

  /**
   * `fromRows`: read from rows another daemon may have written, whose timer fires its lapse
   * first (Scheduler.at's look). Memory keeps the expiry, so a look that finds the row
   * refreshed answers the remembered one: the lapse then runs here and takes the new one in.
   */
  private remember(tree: Worktree, fromRows = false): void {
    const key = keyOf(tree.agentId, tree.room);
    const old = this.trees.get(key);
    if (old) this.index.remove(asClaim(old));
    this.trees.set(key, { ...tree, byPattern: new Map(tree.touched.map((t) => [literalPattern(t.path), t])) });
    if (tree.touched.length > 0) {
      const caseInsensitive = roomIsCaseInsensitive(tree.room);
      this.index.add(asClaim(tree), tree.touched.map((t) => compileGlob(literalPattern(t.path), { caseInsensitive })));
    }
    const look = fromRows
      ? function* (): Tx<number | null> {
          const row = yield* get<{ at: number }>("SELECT expires_at AS at FROM worktrees WHERE agent_id = ? AND room = ?", tree.agentId, tree.room);
          return row ? Math.min(row.at, tree.expiresAt) : null;
        }
      : undefined;
    this.c.scheduler.at(`worktree:${key}`, tree.expiresAt, () => this.expire(tree.agentId, tree.room), look);
  }

  private *drop(tree: Worktree, reason: DepartureReason | "expired"): Tx<void> {
    const key = keyOf(tree.agentId, tree.room);
    yield* runLater("DELETE FROM worktrees WHERE agent_id = ? AND room = ?", tree.agentId, tree.room);
    this.forget(key);
    yield* this.journal.record("worktree.dropped", tree.room, { agentId: tree.agentId, reason, data: { touched_count: tree.touched.length } });
  }

  /** Memory lets go of a report: its touched paths leave the index, its expiry is disarmed. */
  private forget(key: string): void {
    const known = this.trees.get(key);
    if (known) this.index.remove(asClaim(known));
    this.trees.delete(key);
    this.c.scheduler.cancel(`worktree:${key}`);
  }

  /**
   * A report's lapse, checked against its row. A row refreshed since (a report that changed
   * nothing, a row body on another daemon, moves no version) is taken in: its new expiry is
   * remembered and watched. Memory's expiry is never later than the row's, so no call sees a
   * live report as lapsed: at the remembered one this runs first (ctx.tx runs what is due).
   */
  private *expire(agentId: string, room: string): Tx<void> {
    const row = yield* get<WorktreeRow>("SELECT * FROM worktrees WHERE agent_id = ? AND room = ?", agentId, room);
    if (row && row.expires_at <= this.c.clock.now()) yield* this.drop(toWorktree(row), "expired");
    else if (row) this.remember(toWorktree(row), true);
  }
}

function keyOf(agentId: string, room: string): string {
  return `${agentId}\u0000${room}`;
}

/** The index's view of a report: its touched paths as one claim of the agent's, live until the report lapses. */
function asClaim(t: Worktree): Claim {
  return {
    token: keyOf(t.agentId, t.room),
    room: t.room,
    agentId: t.agentId,
    paths: t.touched.map((x) => literalPattern(x.path)),
    reason: null,
    fence: 0,
    acquiredAt: t.reportedAt,
    expiresAt: t.expiresAt,
  };
}

/**
 * Reported paths, normalized (repository-relative, `./` and `//` and a trailing `/` dropped;
 * `..` refused), duplicates once; refused whole, naming the field, before anything changes.
 */
function checkPaths(field: string, paths: readonly string[], room: string, max: number): string[] {
  if (paths.length > max) throw new AirlockError("invalid_argument", `${field} must have at most ${max} paths (got ${paths.length}); report the first ${max}. Nothing was reported`);
  const out = new Set<string>();
  for (const p of paths) {
    if (typeof p !== "string" || p === "" || p.length > MAX_PATTERN_LENGTH || p.includes("\u0000")) {
      throw new AirlockError("invalid_argument", `${field}: every path must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters (got ${JSON.stringify(String(p).slice(0, 60))}); nothing was reported`);
    }
    try {
      out.add(normalizePattern(p, { room }));
    } catch (err) {
      throw new AirlockError("invalid_argument", `${field}: ${(err as Error).message}; nothing was reported`);
    }
  }
  return [...out];
}

/** Whether a path is dirty: listed, or below a listed directory (`git status` shows a new one as `dir/`). */
function dirtyTest(dirty: readonly string[]): (path: string) => boolean {
  const set = new Set(dirty);
  return (path) => {
    if (set.has(path)) return true;
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) if (set.has(path.slice(0, i))) return true;
    return false;
  };
}

/** The report a request makes of the one before it (none: a first), at `now`. */
function treeOf(req: ReportRequest, dirty: string[], touched: readonly string[], before: Worktree | undefined, now: number): Worktree {
  const since = new Map((before?.touched ?? []).map((t) => [t.path, t.since]));
  for (const p of touched) if (!since.has(p)) since.set(p, now);
  const stillDirty = dirtyTest(dirty);
  return {
    agentId: req.agentId,
    room: req.room,
    branch: req.branch ?? null,
    head: req.head ?? null,
    dirty,
    touched: [...since].filter(([p]) => stillDirty(p)).map(([path, at]) => ({ path, since: at })),
    reportedAt: now,
    expiresAt: now + WORKTREE_TTL_MS,
  };
}

/** A report's touched paths as its row stores them: path → since, in the tree's order. */
const touchedText = (t: Worktree) => JSON.stringify(Object.fromEntries(t.touched.map((x) => [x.path, x.since])));

/** A report's times moved, if its row (live) says what the report remembered says: its new times, its key, now, then its branch, head, dirty and touched. */
const SAME_REPORT =
  "UPDATE worktrees SET reported_at = ?, expires_at = ? WHERE agent_id = ? AND room = ? AND expires_at > ? " +
  "AND branch IS NOT DISTINCT FROM ? AND head IS NOT DISTINCT FROM ? AND dirty = ? AND touched = ? RETURNING agent_id";

/** A report's whole row, written if its row (live) says what the report before it says: its columns from branch on, its key, now, then the branch, head, dirty and touched before. */
const CHANGED_REPORT =
  "UPDATE worktrees SET branch = ?, head = ?, dirty = ?, touched = ?, reported_at = ?, expires_at = ? WHERE agent_id = ? AND room = ? AND expires_at > ? " +
  "AND branch IS NOT DISTINCT FROM ? AND head IS NOT DISTINCT FROM ? AND dirty = ? AND touched = ? RETURNING agent_id";

/** A report's row, written if there is none (rowArgs). */
const FIRST_REPORT =
  "INSERT INTO worktrees (agent_id, room, branch, head, dirty, touched, reported_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, room) DO NOTHING RETURNING agent_id";

/** A report's row, column by column: agent_id, room, branch, head, dirty, touched, reported_at, expires_at. */
const rowArgs = (t: Worktree) => [t.agentId, t.room, t.branch, t.head, JSON.stringify(t.dirty), touchedText(t), t.reportedAt, t.expiresAt];

/** What a worktree.reported entry says of the report. */
function reportedData(t: Worktree): Record<string, unknown> {
  return {
    ...(t.branch ? { branch: t.branch } : {}),
    ...(t.head ? { head: t.head } : {}),
    dirty_count: t.dirty.length,
    touched_count: t.touched.length,
    touched: t.touched.slice(0, JOURNAL_PATHS).map((x) => x.path),
  };
}

function changed(a: Worktree, b: Worktree): boolean {
  const paths = (t: Worktree) => t.touched.map((x) => x.path).join("\u0000");
  return a.branch !== b.branch || a.head !== b.head || a.dirty.join("\u0000") !== b.dirty.join("\u0000") || paths(a) !== paths(b);
}

/** Everything a report's row says, as one text: two reports of one agent and room are the same when these are. */
const treeText = (t: Worktree) => JSON.stringify([t.branch, t.head, t.dirty, t.touched, t.reportedAt, t.expiresAt]);

function toWorktree(r: WorktreeRow): Worktree {
  const touched = JSON.parse(r.touched) as Record<string, number>;
  return {
    agentId: r.agent_id,
    room: r.room,
    branch: r.branch,
    head: r.head,
    dirty: JSON.parse(r.dirty) as string[],
    touched: Object.entries(touched).map(([path, since]) => ({ path, since })),
    reportedAt: r.reported_at,
    expiresAt: r.expires_at,
  };
}
