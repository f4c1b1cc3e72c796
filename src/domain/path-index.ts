// The in-memory index of the live path claims, per room, so that a check runs the glob engine's
// overlap product only on the claims that could share a path with it. Pure: no store, no clock.
//
// Every path a pattern matches begins with the pattern's literal prefix: its leading segments
// with no glob syntax, as the glob parser reads them (folded in a case-insensitive room; ending
// before the first segment with a wildcard, class, brace or `**`, whatever `**` may match). So two
// patterns can overlap only when one's prefix is a prefix of the other's. A room's index is a trie
// over prefix segments: a claim's pattern is stored at the node its prefix ends on, and a check of
// P visits the patterns stored on the way down P's prefix (shorter prefixes, wildcard-first ones
// at the root) and every pattern in the subtree where P's prefix ends (equal or longer). A pattern
// whose prefix leaves P's at a literal segment is never visited, and could not overlap P.
// The index only prunes; overlap is still decided by the engine, exactly.
import { AirlockError } from "../errors.ts";
import { type CheckBudget, type CompiledGlob, overlap } from "./glob/index.ts";

export interface Claim {
  token: string;
  room: string;
  agentId: string;
  paths: string[];
  reason: string | null;
  fence: number;
  acquiredAt: number;
  expiresAt: number;
}

export interface Conflict {
  /** The requested pattern. */
  path: string;
  heldBy: string;
  /** The other side's pattern. */
  heldPath: string;
  /** A concrete path both match. */
  witness: string;
  reason: string | null;
  /** When the other side's claim expires (absent for a request queued ahead). */
  expiresAt?: number;
  /** The room the other side's claim is in, when a check covered more than one (see check's `also`). */
  room?: string;
}

export interface Entry {
  readonly claim: Claim;
  readonly glob: CompiledGlob;
  /** Insertion order in the room: conflicts are reported oldest claim first. */
  readonly seq: number;
}

interface Node {
  readonly here: Set<Entry>;
  readonly below: Map<string, Node>;
}

const node = (): Node => ({ here: new Set(), below: new Map() });

/** One room's live claims, and their patterns in a trie by literal prefix. */
export class RoomIndex {
  readonly claims = new Map<string, Claim>();
  private readonly entries = new Map<string, Entry[]>();
  private readonly root = node();
  private seq = 0;

  /** Both sides of an overlap check are compiled with the room's case rule; prefixes are folded alike. */
  constructor(readonly caseInsensitive: boolean) {}

  add(claim: Claim, globs: readonly CompiledGlob[]): void {
    this.remove(claim.token);
    const entries = globs.map((glob) => ({ claim, glob, seq: this.seq++ }));
    for (const e of entries) {
      this.assertCase(e.glob);
      let n = this.root;
      for (const segment of e.glob.literalPrefix) {
        let next = n.below.get(segment);
        if (!next) n.below.set(segment, (next = node()));
        n = next;
      }
      n.here.add(e);
    }
    this.claims.set(claim.token, claim);
    this.entries.set(claim.token, entries);
  }

  /** Drops a claim's patterns, and the trie nodes left empty (a room's memory follows its live claims). */
  remove(token: string): void {
    for (const e of this.entries.get(token) ?? []) {
      const prefix = e.glob.literalPrefix;
      const trail = [this.root];
      for (const segment of prefix) trail.push(trail[trail.length - 1]!.below.get(segment)!);
      trail[trail.length - 1]!.here.delete(e);
      for (let i = trail.length - 1; i > 0; i--) {
        const n = trail[i]!;
        if (n.here.size > 0 || n.below.size > 0) break;
        trail[i - 1]!.below.delete(prefix[i - 1]!);
      }
    }
    this.claims.delete(token);
    this.entries.delete(token);
  }

  /** Calls fn with every stored pattern that could overlap glob: a superset of those that do. */
  visit(glob: CompiledGlob, fn: (e: Entry) => void): void {
    this.assertCase(glob);
    let n = this.root;
    for (const segment of glob.literalPrefix) {
      for (const e of n.here) fn(e);
      const next = n.below.get(segment);
      if (!next) return;
      n = next;
    }
    const stack = [n];
    while (stack.length > 0) {
      const m = stack.pop()!;
      for (const e of m.here) fn(e);
      for (const child of m.below.values()) stack.push(child);
    }
  }

  /** Every (checked, held) pair that overlaps, against live claims of agents other than agentId. */
  conflicts(globs: readonly CompiledGlob[], agentId: string | undefined, now: number, budget: CheckBudget): Conflict[] {
    const out: Conflict[] = [];
    for (const a of globs) {
      const found: { seq: number; conflict: Conflict }[] = [];
      this.visit(a, (e) => {
        if (e.claim.agentId === agentId || e.claim.expiresAt <= now) return;
        const witness = overlap(a, e.glob, budget);
        if (witness === null) return;
        const { claim } = e;
        found.push({
          seq: e.seq,
          conflict: { path: a.source, heldBy: claim.agentId, heldPath: e.glob.source, witness, reason: claim.reason, expiresAt: claim.expiresAt },
        });
      });
      found.sort((x, y) => x.seq - y.seq);
      for (const f of found) out.push(f.conflict);
    }
    return out;
  }

  private assertCase(glob: CompiledGlob): void {
    if (glob.caseInsensitive !== this.caseInsensitive) {
      throw new AirlockError("internal", `path index: ${glob.source} compiled with another case rule than its room`);
    }
  }
}

/** The rooms' indexes; a room's goes when its last claim does. */
export class PathIndex {
  private readonly rooms = new Map<string, RoomIndex>();
  /** Every indexed claim, of every room, by token (kept as claims come and go). */
  private readonly tokens = new Map<string, Claim>();

  /** The indexed claim with this token in the room, if any. */
  find(room: string, token: string): Claim | undefined {
    return this.rooms.get(room)?.claims.get(token);
  }

  /** Every indexed claim, of every room, by token. */
  get byToken(): ReadonlyMap<string, Claim> {
    return this.tokens;
  }

  claimsIn(room: string): Claim[] {
    return [...(this.rooms.get(room)?.claims.values() ?? [])];
  }

  /** Indexes a claim under its compiled patterns (compiled with its room's case rule). */
  add(claim: Claim, globs: readonly CompiledGlob[]): void {
    let idx = this.rooms.get(claim.room);
    if (!idx) this.rooms.set(claim.room, (idx = new RoomIndex(globs[0]?.caseInsensitive ?? false)));
    idx.add(claim, globs);
    this.tokens.set(claim.token, claim);
  }

  remove(claim: Claim): void {
    const idx = this.rooms.get(claim.room);
    if (!idx?.claims.has(claim.token)) return;
    idx.remove(claim.token);
    this.tokens.delete(claim.token);
    if (idx.claims.size === 0) this.rooms.delete(claim.room);
  }

  conflicts(room: string, globs: readonly CompiledGlob[], agentId: string | undefined, now: number, budget: CheckBudget): Conflict[] {
    return this.rooms.get(room)?.conflicts(globs, agentId, now, budget) ?? [];
  }
}
