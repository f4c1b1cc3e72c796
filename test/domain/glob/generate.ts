// Random patterns and paths for checking the engine against the oracle: a seeded PRNG (so a
// failing run can be replayed with GLOB_SEED), a pattern generator over a tiny alphabet (so
// overlaps and non-overlaps are both common), a sampler of paths a pattern matches, and the
// exhaustive list of short paths over that alphabet.
import { expansions, isValidPath, oracle } from "./oracle.ts";

export type Rng = () => number;

/** mulberry32: tiny, fast, and good enough to spread test cases. */
export function rng(seed: number): Rng {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (r: Rng, n: number) => Math.floor(r() * n);
const choose = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, xs.length)]!;

const ATOMS = ["a", "a", "b", "b", ".", "*", "*", "**", "**", "?", "[ab]", "[!a]", "[^b]", "[a-b]", "[.a]", "[!.]", "[]a]", "[a-]", "\\a"];
// Rarer: escaped glob characters (which force a glob character into any common path), a
// one-branch brace, and characters that are ordinary outside braces.
const RARE_ATOMS = ["\\*", "[*]", "\\[", "{a}", "{}"];
const TOP_LEVEL_ONLY = ["}", ","];
const CASE_ATOMS = ["A", "B", "[A]", "[!B]", "[A-B]"];

function sequence(r: Rng, depth: number, ci: boolean, maxItems: number): string {
  const n = 1 + int(r, maxItems);
  let out = "";
  for (let k = 0; k < n; k++) {
    const roll = r();
    if (roll < 0.28) out += "/";
    else if (roll < 0.36 && depth < 2) {
      const branches = 2 + int(r, 2);
      const parts: string[] = [];
      for (let b = 0; b < branches; b++) parts.push(r() < 0.15 ? "" : sequence(r, depth + 1, ci, 3));
      out += `{${parts.join(",")}}`;
    } else if (ci && roll < 0.5) out += choose(r, CASE_ATOMS);
    else out += choose(r, ATOMS);
  }
  return out;
}

/** A random pattern (not yet normalized; it may normalize to an error, e.g. a `..` segment). */
export function randomPattern(r: Rng, ci = false): string {
  // Mostly literal-led patterns, as in real claims, so that prefixes are exercised too.
  const lead = r() < 0.4 ? `${choose(r, ["a", "b", "A"].slice(0, ci ? 3 : 2))}/` : "";
  return lead + sequence(r, 0, ci, 6);
}

// Literal segments: plain and dotted names, escaped glob characters, and `]`, `}` and `,`, which
// are ordinary outside a class or brace; `.` and `..` alone are normalized away or refused.
const LITERAL_ATOMS = ["a", "a", "b", "b", ".", ".", "-", "\\*", "\\?", "\\[", "\\a", "]", "}", ","];
const LITERAL_CASE_ATOMS = ["A", "B", "\\A"];

/** A random literal pattern: no wildcard, class or brace, so it names one path and, being
 *  possibly a directory, everything below it. Often one or two segments deep, as a checked file is
 *  against the claims around it. */
export function randomLiteral(r: Rng, ci = false): string {
  const segments: string[] = [];
  for (let n = 1 + int(r, 4); n > 0; n--) {
    let seg = "";
    for (let k = 1 + int(r, 3); k > 0; k--) seg += choose(r, ci && r() < 0.3 ? LITERAL_CASE_ATOMS : LITERAL_ATOMS);
    segments.push(seg);
  }
  return segments.join("/");
}

const CHAR_POOL = ["a", "b", "c", ".", "A", "-", "*"];

/** Up to `count` distinct paths the pattern matches (by the oracle), drawn at random. */
export function samplePaths(r: Rng, pattern: string, count: number, ci = false): string[] {
  const o = oracle(pattern, ci);
  const exps = expansions(pattern);
  const found = new Set<string>();
  for (let tries = 0; tries < count * 8 && found.size < count; tries++) {
    const toks = choose(r, exps);
    let path = "";
    for (const tok of toks) {
      switch (tok.t) {
        case "lit":
          path += String.fromCodePoint(tok.cp);
          break;
        case "sep":
          path += "/";
          break;
        case "any":
        case "class":
          path += choose(r, CHAR_POOL);
          break;
        case "star":
          for (let k = int(r, 4); k > 0; k--) path += choose(r, CHAR_POOL);
          break;
        case "dstar":
          for (let k = int(r, 4); k > 0; k--) path += (k % 2 ? "/" : "") + choose(r, CHAR_POOL) + choose(r, CHAR_POOL);
          break;
      }
    }
    if (r() < 0.3) path += `/${choose(r, CHAR_POOL)}${choose(r, CHAR_POOL)}`; // below a literal
    path = path.split("/").filter((s) => s !== "").join("/");
    if (ci && r() < 0.5) path = path.toUpperCase();
    if (isValidPath(path) && o.test(path)) found.add(path);
  }
  return [...found];
}

/** Every valid path over `alphabet` (which should include "/") of length 1..maxLength. */
export function allPaths(alphabet: readonly string[], maxLength: number): string[] {
  const out: string[] = [];
  let frontier = [""];
  for (let len = 1; len <= maxLength; len++) {
    const next: string[] = [];
    for (const p of frontier) for (const c of alphabet) next.push(p + c);
    for (const p of next) if (isValidPath(p)) out.push(p);
    frontier = next;
  }
  return out;
}
