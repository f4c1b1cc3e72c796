// A pattern compiled to a character-level automaton over whole paths.
//
// Overlap has to be decided exactly for `*`, `**` (which may match zero segments), classes and
// braces that cross `/`, so every pattern becomes one nondeterministic automaton over the
// characters of a path, and two patterns overlap when the product of their automata reaches a
// pair of accepting states. The automaton is built in two steps: a Thompson graph of the tokens
// (braces become forks, so its size is linear in the pattern), then a walk over (graph node,
// segment mode) pairs that turns tokens into character steps. The segment mode carries the
// context that glob semantics need and a plain token graph does not have:
//
//  - A path has no empty segments, so a segment of the pattern made only of stars must still
//    match at least one character (`a/*/b` does not match `a/b`), while a segment with no tokens
//    at all (`a/{,x/}b`, an empty brace branch) simply disappears, as `//` does.
//  - A `**` is "zero or more segments" only when it is a whole segment in the branch actually
//    taken; elsewhere it is `*`. Which it is depends on the token after it, which the walk has
//    not seen yet, so at the start of a segment both readings are followed: the globstar one
//    then insists on `/` or the end next, and the `*` one adds nothing a globstar would not
//    match anyway (exactly one segment is among zero or more).
//  - The `/` before a segment is emitted only together with that segment's first character, so a
//    `**` that matches nothing leaves no stray separator (`src/**` matches `src`).
//
// Finally the ε-moves are folded away and states that cannot reach a match are dropped, so the
// product only ever walks useful states.
import type { Token, Seq } from "./parse.ts";
import { type CharSet, SEGMENT_CHAR_SET, SLASH_SET, union } from "./charset.ts";
import { MAX_AUTOMATON_STATES, patternError, quotePattern } from "./limits.ts";

/** ε-free automaton; state 0 is the start. Edges of state s are `edgeStart[s] .. edgeStart[s+1]`. */
export interface Automaton {
  readonly size: number;
  readonly accept: Uint8Array;
  readonly edgeStart: Int32Array;
  readonly edgeTo: Int32Array;
  /** Per edge, an index into `sets`: the distinct sets are few, so a product search can remember
   *  what it learned about a pair of them instead of intersecting again. */
  readonly edgeSetIndex: Int32Array;
  readonly sets: readonly CharSet[];
  /** Steps from the start that read exactly one character, each from a state that does not
   *  accept and has one edge: a literal pattern's whole path, a glob's head up to its first
   *  wildcard, class or brace. Every path both sides match spells them (head.ts). */
  readonly forced: number;
  /** For a literal pattern, the state its forced run ends at (its path read), provided what
   *  follows is its implied `/**` in the one shape buildAutomaton gives it (below.ts); else -1. */
  readonly literalEnd: number;
  /** A literal's path as its automaton reads it (folded when case-insensitive); "" for a glob. */
  readonly literalText: string;
}

// Segment modes: where the path being built stands relative to segments.
const B0 = 0; // nothing emitted yet; the current pattern segment has no tokens so far
const B = 1; // something emitted, then a `/` token: the next character needs a separator first
const T0 = 2; // nothing emitted; the segment has tokens, all of which matched empty so far
const T = 3; // as T0, after earlier segments (separator still owed)
const C = 4; // the segment has at least one character
const G0 = 5; // a whole-segment `**` that has emitted nothing, at the path's start
const G = 6; // a whole-segment `**` after output; only `/` or the end may follow
const GNEW = 7; // inside `**`: a separator was emitted, a segment's first character is due
const GIN = 8; // inside `**`: within a segment that has characters
const SEP = 9; // a separator was emitted for the token at this node; its character is due
const MODES = 10;

interface Graph {
  eps: number[][];
  tokens: Array<Array<{ token: Token; to: number }>>;
  /** The token whose edge enters this node (each token edge gets a fresh target node). */
  tokenAt: Array<Token | null>;
}

const SLASH_TOKEN: Token = { kind: "slash" };
const GLOBSTAR_TOKEN: Token = { kind: "globstar" };

export function buildAutomaton(seq: Seq, literal: boolean, source: string): Automaton {
  const g: Graph = { eps: [], tokens: [], tokenAt: [] };
  const start = addNode(g, null);
  let end = addSeq(g, seq, start);
  // A literal pattern may name a directory, so it also covers everything below it: P is P/**.
  if (literal) end = addSeq(g, [SLASH_TOKEN, GLOBSTAR_TOKEN], end);
  return epsilonFree(explore(g, start, end), source, literal);
}

function addNode(g: Graph, token: Token | null): number {
  g.eps.push([]);
  g.tokens.push([]);
  g.tokenAt.push(token);
  return g.eps.length - 1;
}

function addSeq(g: Graph, seq: Seq, from: number): number {
  let at = from;
  for (const item of seq) {
    if (item.kind === "alt") {
      const join = addNode(g, null);
      for (const branch of item.branches) {
        const s = addNode(g, null);
        g.eps[at]!.push(s);
        g.eps[addSeq(g, branch, s)]!.push(join);
      }
      at = join;
    } else {
      const to = addNode(g, item);
      g.tokens[at]!.push({ token: item, to });
      at = to;
    }
  }
  return at;
}

/** The reachable (node, mode) states, each with its ε-moves and character steps. */
interface Explored {
  count: number;
  eps: number[][];
  steps: Array<Array<{ set: CharSet; to: number }>>;
  accept: boolean[];
}

function explore(g: Graph, start: number, end: number): Explored {
  const index = new Int32Array(g.eps.length * MODES).fill(-1);
  const keys: number[] = [];
  const out: Explored = { count: 0, eps: [], steps: [], accept: [] };
  const visit = (node: number, mode: number): number => {
    const key = node * MODES + mode;
    let id = index[key]!;
    if (id < 0) {
      id = out.count++;
      index[key] = id;
      keys.push(key);
      out.eps.push([]);
      out.steps.push([]);
      out.accept.push(node === end && (mode === C || mode === G || mode === B));
    }
    return id;
  };
  visit(start, B0);
  for (let k = 0; k < keys.length; k++) {
    const node = Math.floor(keys[k]! / MODES);
    const mode = keys[k]! % MODES;
    const eps = out.eps[k]!;
    const steps = out.steps[k]!;
    const epsTo = (n: number, m: number) => eps.push(visit(n, m));
    const step = (set: CharSet, n: number, m: number) => steps.push({ set, to: visit(n, m) });

    // Moves that stay at this node: the inside of the token that entered it.
    const own = g.tokenAt[node];
    if (mode === SEP) step(own?.kind === "char" ? own.set : SEGMENT_CHAR_SET, node, C);
    if (own?.kind === "star" || own?.kind === "globstar") {
      if (mode === T0) step(SEGMENT_CHAR_SET, node, C);
      if (mode === T) step(SLASH_SET, node, SEP);
      if (mode === C) step(SEGMENT_CHAR_SET, node, C);
    }
    if (own?.kind === "globstar") {
      if (mode === G0) step(SEGMENT_CHAR_SET, node, GIN);
      if (mode === G) step(SLASH_SET, node, GNEW);
      if (mode === GNEW) step(SEGMENT_CHAR_SET, node, GIN);
      if (mode === GIN) {
        step(SEGMENT_CHAR_SET, node, GIN);
        epsTo(node, G);
      }
    }
    // Only states between tokens move on to the next token.
    if (mode === SEP || mode === GNEW || mode === GIN) continue;
    for (const n of g.eps[node]!) epsTo(n, mode);
    for (const { token, to } of g.tokens[node]!) {
      switch (token.kind) {
        case "slash":
          // Closing a segment that has tokens but no characters would leave it empty.
          if (mode === B0 || mode === G0) epsTo(to, B0);
          else if (mode === B || mode === C || mode === G) epsTo(to, B);
          break;
        case "char":
          if (mode === B0 || mode === T0 || mode === C) step(token.set, to, C);
          else if (mode === B || mode === T) step(SLASH_SET, to, SEP);
          break;
        case "globstar":
          if (mode === B0) epsTo(to, G0);
          else if (mode === B) epsTo(to, G);
          break;
        case "star":
          break;
      }
      // Any `**` may also be read as `*` (see the header for why that is safe).
      if (token.kind === "star" || token.kind === "globstar") {
        if (mode === B0 || mode === T0) epsTo(to, T0);
        else if (mode === B || mode === T) epsTo(to, T);
        else if (mode === C) epsTo(to, C);
      }
    }
  }
  return out;
}

function epsilonFree(x: Explored, source: string, literal: boolean): Automaton {
  // The states that survive: the start and every target of a character step.
  const keep: number[] = [0];
  const isKept = new Uint8Array(x.count);
  isKept[0] = 1;
  for (const steps of x.steps) {
    for (const { to } of steps) {
      if (!isKept[to]) {
        isKept[to] = 1;
        keep.push(to);
      }
    }
  }
  const stamp = new Int32Array(x.count).fill(-1);
  const edges: Array<Map<number, CharSet>> = [];
  const accept: boolean[] = [];
  const stack: number[] = [];
  for (let k = 0; k < keep.length; k++) {
    const merged = new Map<number, CharSet>();
    let acc = false;
    stack.push(keep[k]!);
    stamp[keep[k]!] = k;
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (x.accept[s]) acc = true;
      for (const { set, to } of x.steps[s]!) {
        const prev = merged.get(to);
        merged.set(to, prev === undefined ? set : union(prev, set));
      }
      for (const e of x.eps[s]!) {
        if (stamp[e] !== k) {
          stamp[e] = k;
          stack.push(e);
        }
      }
    }
    edges.push(merged);
    accept.push(acc);
  }
  // Drop states from which no match is reachable.
  const position = new Map<number, number>();
  keep.forEach((s, k) => position.set(s, k));
  const reverse: number[][] = keep.map(() => []);
  edges.forEach((m, k) => {
    for (const to of m.keys()) reverse[position.get(to)!]!.push(k);
  });
  const live = new Uint8Array(keep.length);
  const work: number[] = [];
  accept.forEach((a, k) => {
    if (a) {
      live[k] = 1;
      work.push(k);
    }
  });
  while (work.length > 0) {
    for (const p of reverse[work.pop()!]!) {
      if (!live[p]) {
        live[p] = 1;
        work.push(p);
      }
    }
  }
  if (!live[0]) {
    const none = { size: 1, accept: new Uint8Array(1), edgeStart: new Int32Array(2), edgeTo: new Int32Array(0) };
    return { ...none, edgeSetIndex: new Int32Array(0), sets: [], forced: 0, literalEnd: -1, literalText: "" };
  }
  const renumber = new Int32Array(keep.length).fill(-1);
  let size = 0;
  for (let k = 0; k < keep.length; k++) if (live[k]) renumber[k] = size++;
  if (size > MAX_AUTOMATON_STATES) {
    throw patternError(
      `pattern is too complex: its automaton needs ${size} states, at most ${MAX_AUTOMATON_STATES} (${quotePattern(source)})`,
    );
  }
  const acceptOut = new Uint8Array(size);
  const edgeStart = new Int32Array(size + 1);
  const edgeTo: number[] = [];
  const edgeSetIndex: number[] = [];
  const sets: CharSet[] = [];
  const setIds = new Map<string, number>();
  for (let k = 0; k < keep.length; k++) {
    const s = renumber[k]!;
    if (s < 0) continue;
    acceptOut[s] = accept[k] ? 1 : 0;
    edgeStart[s] = edgeTo.length;
    for (const [to, set] of edges[k]!) {
      const t = renumber[position.get(to)!]!;
      if (t < 0) continue;
      const text = set.join(",");
      let id = setIds.get(text);
      if (id === undefined) {
        id = sets.length;
        setIds.set(text, id);
        sets.push(set);
      }
      edgeTo.push(t);
      edgeSetIndex.push(id);
    }
    edgeStart[s + 1] = edgeTo.length;
  }
  const out = {
    size,
    accept: acceptOut,
    edgeStart,
    edgeTo: Int32Array.from(edgeTo),
    edgeSetIndex: Int32Array.from(edgeSetIndex),
    sets,
  };
  const forced = forcedSteps(out);
  const end = literal ? literalEnd(out, forced) : -1;
  return { ...out, forced, literalEnd: end, literalText: end < 0 ? "" : forcedText(out, forced) };
}

/** What a literal's implied `/**` looks like from the end of its path, as tailShape writes it:
 *  `/` to one segment (the `*` reading) or to one or more (the `**` reading). */
const LITERAL_TAIL = "0A:/1,/2|1:s3|2:s4|3A:s3|4A:s4,/2";

type Edges = Omit<Automaton, "forced" | "literalEnd" | "literalText">;

function forcedText(a: Edges, forced: number): string {
  const chars: number[] = [];
  for (let s = 0, n = 0; n < forced; n++) {
    const e = a.edgeStart[s]!;
    chars.push(a.sets[a.edgeSetIndex[e]!]![0]!);
    s = a.edgeTo[e]!;
  }
  let text = "";
  for (let i = 0; i < chars.length; i += 4096) text += String.fromCodePoint(...chars.slice(i, i + 4096));
  return text;
}

function literalEnd(a: Edges, forced: number): number {
  let s = 0;
  for (let n = 0; n < forced; n++) s = a.edgeTo[a.edgeStart[s]!]!;
  return tailShape(a, s) === LITERAL_TAIL ? s : -1;
}

/** The states reachable from `from`, numbered in breadth-first order, with their edges in
 *  order (`/`, `s` for any segment character, `?` for anything else). */
function tailShape(a: Edges, from: number): string {
  const ids = new Map<number, number>([[from, 0]]);
  const order = [from];
  const parts: string[] = [];
  for (let k = 0; k < order.length && k < 8; k++) {
    const s = order[k]!;
    const edges: string[] = [];
    for (let e = a.edgeStart[s]!; e < a.edgeStart[s + 1]!; e++) {
      const t = a.edgeTo[e]!;
      if (!ids.has(t)) {
        ids.set(t, order.length);
        order.push(t);
      }
      const set = a.sets[a.edgeSetIndex[e]!]!.join(",");
      const kind = set === SLASH_SET.join(",") ? "/" : set === SEGMENT_CHAR_SET.join(",") ? "s" : "?";
      edges.push(`${kind}${ids.get(t)}`);
    }
    parts.push(`${k}${a.accept[s] ? "A" : ""}:${edges.join(",")}`);
  }
  return order.length > 8 ? "" : parts.join("|");
}

function forcedSteps(a: Edges): number {
  const visited = new Uint8Array(a.size);
  let n = 0;
  // A cycle of such states could not reach a match, so it was dropped; the check is a guard.
  for (let s = 0; !visited[s] && !a.accept[s] && a.edgeStart[s + 1]! - a.edgeStart[s]! === 1; n++) {
    const e = a.edgeStart[s]!;
    const set = a.sets[a.edgeSetIndex[e]!]!;
    if (set.length !== 2 || set[0] !== set[1]) break;
    visited[s] = 1;
    s = a.edgeTo[e]!;
  }
  return n;
}
