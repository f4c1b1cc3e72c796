// The bookkeeping behind test/cluster/random.test.ts: what the simulated agents were told
// (grants with their fences, releases, counter values, journal pages) and the invariants
// checked against it, during the run and at its end. Every check is sound from the client's
// side alone: a grant is held from before its answer arrived (the daemon answers after COMMIT)
// until after its release was sent (the release commits after that), so a hold is recorded as
// [answer, release sent), an interval inside the true one. Two such intervals that overlap
// are two holders on the server. Nothing here reads a clock of the daemons' or assumes a
// latency: only order (this process's event loop) and outcome.
import { overlappingPrefix } from "./random-paths.ts";

/** One grant as its agent saw it. `to` is Infinity until the release is sent. */
export interface Grant {
  kind: "lock" | "slot" | "claim";
  /** The lock's name, the pool's, or the room's. */
  key: string;
  agent: string;
  fence: number;
  /** When the request was sent, and when the grant's answer arrived. */
  asked: number;
  from: number;
  to: number;
  /** The grant's own end (its TTL from the request, less slack) if never released: not held after it. */
  lapse: number;
  weight: number;
  paths: readonly string[];
  /** The operation that got it, for messages. */
  op: string;
  /** When the release's answer (released: true) arrived. */
  released?: number;
}

const end = (g: Grant) => Math.min(g.to, g.lapse);

/** Held throughout [sent, ack]: granted before the read was sent, not released before its answer. */
export const heldThroughout = (g: Grant, sent: number, ack: number) => g.from < sent && end(g) > ack;

/** Where every violation goes: each one names the seed and the operation. */
export class Violations {
  readonly list: string[] = [];
  constructor(readonly seed: number) {}
  add(op: string, what: string): void {
    this.list.push(`seed=${this.seed} op ${op}: ${what}`);
  }
}

/** The run's grants of every kind, checked as each one arrives. */
export class Book {
  private readonly grants = new Map<string, Grant[]>();
  constructor(
    private readonly v: Violations,
    private readonly capacity: number,
  ) {}

  all(kind?: Grant["kind"]): Grant[] {
    return [...this.grants.values()].flat().filter((g) => kind === undefined || g.kind === kind);
  }

  /** Records a grant whose answer just arrived, and checks it against what was held at that moment. */
  granted(g: Grant): void {
    const id = `${g.kind}:${g.key}`;
    const same = this.grants.get(id) ?? [];
    this.grants.set(id, [...same, g]);
    const open = same.filter((h) => end(h) > g.from);
    if (g.kind === "lock") {
      for (const h of open) this.v.add(g.op, `lock ${g.key} granted to ${g.agent} (fence ${g.fence}) while ${h.agent} still held it (fence ${h.fence}, from op ${h.op})`);
    } else if (g.kind === "slot") {
      const held = open.reduce((n, h) => n + h.weight, 0);
      if (held + g.weight > this.capacity) {
        this.v.add(g.op, `pool ${g.key}: a slot of weight ${g.weight} granted to ${g.agent} while ${held} of ${this.capacity} were held (${open.map((h) => `${h.agent}×${h.weight} from op ${h.op}`).join(", ")})`);
      }
    } else {
      for (const h of open) {
        if (h.agent === g.agent) continue; // an agent never conflicts with its own claims
        const pair = overlappingPrefix(g.paths, h.paths);
        if (pair) this.v.add(g.op, `room ${g.key}: ${g.agent} granted ${pair[0]} while ${h.agent} held ${pair[1]} (from op ${h.op})`);
      }
    }
    // Fences strictly increase: a grant asked for after another's answer arrived carries a
    // greater fence, and no two grants of one key share one.
    for (const h of same) {
      if (h.fence === g.fence) this.v.add(g.op, `${g.kind} ${g.key}: fence ${g.fence} given twice (${h.agent} at op ${h.op}, ${g.agent})`);
      else if (h.from < g.asked && g.fence < h.fence) this.v.add(g.op, `${g.kind} ${g.key}: fence ${g.fence} after fence ${h.fence} (op ${h.op}) had been answered`);
    }
  }

  /** Grants of kind held throughout [sent, ack] (a read in that window must show them). */
  stable(kind: Grant["kind"], sent: number, ack: number): Grant[] {
    return this.all(kind).filter((g) => heldThroughout(g, sent, ack));
  }
}

/** What a list_locks entry, a list_pools entry and a list_path_claims entry hold, as far as the checks go. */
export interface LockEntry {
  name: string;
  agent_id?: string;
  fence?: number;
}
export interface PoolEntry {
  pool: string;
  capacity: number;
  in_use: number;
  offered: number;
  holders: { agent_id: string; weight: number }[];
  waiters: { agent_id: string; state: string }[];
}
export interface ClaimEntry {
  agent_id: string;
  paths: string[];
  fence: number;
}

/** A list_locks answer read in [sent, ack]: every lock held throughout shows, with its holder and fence. Returns how many it checked. */
export function checkLocks(v: Violations, op: string, book: Book, list: LockEntry[], sent: number, ack: number): number {
  const stable = book.stable("lock", sent, ack);
  for (const g of stable) {
    const e = list.find((l) => l.name === g.key);
    if (e?.agent_id !== g.agent || e.fence !== g.fence) {
      v.add(op, `list_locks shows ${g.key} as ${JSON.stringify(e ?? null)} while ${g.agent} held it throughout (fence ${g.fence}, from op ${g.op})`);
    }
  }
  return stable.length;
}

/** A list_pools answer read in [sent, ack]: held + offered ≤ capacity, and every slot held throughout shows. Returns how many it checked. */
export function checkPool(v: Violations, op: string, book: Book, pools: PoolEntry[], name: string, sent: number, ack: number): number {
  const p = pools.find((x) => x.pool === name);
  if (!p) {
    v.add(op, `list_pools has no pool ${name}`);
    return 0;
  }
  if (p.in_use + p.offered > p.capacity) v.add(op, `pool ${name}: held ${p.in_use} + offered ${p.offered} > capacity ${p.capacity} (${JSON.stringify(p)})`);
  const weights = p.holders.reduce((n, h) => n + h.weight, 0);
  if (weights !== p.in_use) v.add(op, `pool ${name}: in_use ${p.in_use} but the holders' weights sum to ${weights}`);
  const stable = book.stable("slot", sent, ack).filter((s) => s.key === name);
  for (const g of stable) {
    if (!p.holders.some((h) => h.agent_id === g.agent && h.weight === g.weight)) {
      v.add(op, `list_pools does not show ${g.agent}'s slot (weight ${g.weight}, fence ${g.fence}, from op ${g.op}), held throughout: ${JSON.stringify(p.holders)}`);
    }
  }
  return stable.length;
}

/** A list_path_claims answer read in [sent, ack]: no two agents' claims overlap, and every claim held throughout shows. Returns how many it checked. */
export function checkClaims(v: Violations, op: string, book: Book, room: string, claims: ClaimEntry[], sent: number, ack: number): number {
  for (let i = 0; i < claims.length; i++) {
    for (let j = i + 1; j < claims.length; j++) {
      const a = claims[i]!;
      const b = claims[j]!;
      const pair = a.agent_id === b.agent_id ? null : overlappingPrefix(a.paths, b.paths);
      if (pair) v.add(op, `list_path_claims: ${a.agent_id}'s ${pair[0]} (fence ${a.fence}) overlaps ${b.agent_id}'s ${pair[1]} (fence ${b.fence})`);
    }
  }
  const stable = book.stable("claim", sent, ack).filter((c) => c.key === room);
  for (const g of stable) {
    if (!claims.some((c) => c.agent_id === g.agent && c.fence === g.fence)) {
      v.add(op, `list_path_claims does not show ${g.agent}'s claim ${JSON.stringify(g.paths)} (fence ${g.fence}, from op ${g.op}), held throughout`);
    }
  }
  return stable.length;
}

/** One journal entry, as the checks compare them. */
export interface Change {
  revision: number;
  kind: string;
  resource: string;
  agent_id?: string;
  fence?: number;
  value?: number;
}
export const changeKey = (c: Change) => `${c.revision} ${c.kind} ${c.resource} ${c.agent_id ?? "-"}`;

/**
 * A watch_changes reader's view: the position it passes back and every change it was shown.
 * "Gap-free" here: revisions come from a PostgreSQL sequence, and a transaction that rolled
 * back (or a value a sequence cached and never used) leaves a hole for good, so a missing
 * number is not an error. What is: a revision shown after a higher one was (in one answer, or
 * below a position already passed back), and, at the end, a full re-read of the same filter
 * that holds a change the reader never saw below its last position, i.e. one that became
 * visible only after the reader had moved past it (a late arrival), or that lacks one it saw.
 */
export class Reader {
  since = 0;
  readonly seen: Change[] = [];
  constructor(
    readonly name: string,
    readonly kinds: string[] | undefined,
  ) {}

  /** Takes one answer to watch_changes(since_revision: this.since, ...). */
  take(v: Violations, op: string, r: { revision: number; changes: Change[]; trimmed?: boolean }): void {
    if (r.trimmed) v.add(op, `${this.name}: trimmed:true after revision ${this.since}`);
    let last = this.since;
    for (const c of r.changes) {
      if (c.revision <= last) v.add(op, `${this.name}: revision ${c.revision} shown after ${last} (since_revision ${this.since})`);
      if (this.kinds && !this.kinds.some((k) => (k.endsWith(".") ? c.kind.startsWith(k) : c.kind === k))) v.add(op, `${this.name}: kind ${c.kind} outside ${JSON.stringify(this.kinds)}`);
      last = Math.max(last, c.revision);
      this.seen.push(c);
    }
    if (r.revision < last) v.add(op, `${this.name}: answered revision ${r.revision} below its own last change ${last}`);
    this.since = Math.max(last, r.revision);
  }

  /** The end: a full re-read of this filter (from any daemon) up to the reader's position equals what it saw. */
  compare(v: Violations, op: string, full: Change[]): void {
    const mine = new Set(this.seen.map(changeKey));
    const upTo = full.filter((c) => c.revision <= this.since);
    const there = new Set(upTo.map(changeKey));
    const late = upTo.filter((c) => !mine.has(changeKey(c)));
    const gone = this.seen.filter((c) => !there.has(changeKey(c)));
    if (late.length) v.add(op, `${this.name}: ${late.length} change(s) at or below its position ${this.since} it never saw (late arrivals), first ${JSON.stringify(late.slice(0, 3))}`);
    if (gone.length) v.add(op, `${this.name}: ${gone.length} change(s) it saw are not in the re-read, first ${JSON.stringify(gone.slice(0, 3))}`);
  }
}

/**
 * The journal's own word on fences: for one lock name (or one room's claims), the grants in
 * revision order carry strictly increasing fences, and every grant an agent was answered is
 * there, with its agent and fence.
 */
export function checkJournalFences(v: Violations, journal: Change[], grants: Grant[], kind: "lock.granted" | "path.granted", of: Grant["kind"]): void {
  const last = new Map<string, Change>();
  for (const c of journal) {
    if (c.kind !== kind) continue;
    const before = last.get(c.resource);
    if (before && (c.fence ?? 0) <= (before.fence ?? 0)) {
      v.add("end", `journal: ${kind} ${c.resource} fence ${c.fence} at revision ${c.revision} after fence ${before.fence} at revision ${before.revision}`);
    }
    last.set(c.resource, c);
  }
  const recorded = new Set(journal.filter((c) => c.kind === kind).map((c) => `${c.resource} ${c.agent_id} ${c.fence}`));
  for (const g of grants.filter((x) => x.kind === of)) {
    if (!recorded.has(`${g.key} ${g.agent} ${g.fence}`)) v.add(g.op, `journal: no ${kind} of ${g.key} to ${g.agent} with fence ${g.fence}`);
  }
}
