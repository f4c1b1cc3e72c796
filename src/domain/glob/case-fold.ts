// Case folding for rooms on case-insensitive file systems (macOS, Windows defaults).
//
// The rule is one simple mapping applied to both sides: a character folds to its lowercase
// form when that form is a single code point (so `İ`, whose lowercase is two code points, stays
// itself), repeated until it stops changing. A path matches a pattern case-insensitively when its
// folded form is in the language of the folded pattern: literals fold; a positive class folds to
// the image of its members (`[A-C]` is `[a-c]`); a negated class is the complement of its folded
// positive part, so `[!k]` matches neither `k` nor `K`. Folded paths only ever contain characters
// that fold to themselves, which is why the engine picks witness characters from those.
import { type CharSet, MAX_CODE_POINT, fromRanges, intersect, intervalIndex, subtract, union } from "./charset.ts";

interface FoldTable {
  /** Every code point whose fold differs from itself. */
  changed: CharSet;
  /** Sorted code points that change, and what each folds to. */
  from: Int32Array;
  to: Int32Array;
}

let table: FoldTable | undefined;

// Built on first use: a scan of all code points costs tens of milliseconds once, and rooms that
// are case-sensitive never pay it. Scanning everything (rather than a hand-made list of cased
// scripts) keeps the mapping exactly the runtime's Unicode tables.
function foldTable(): FoldTable {
  if (table) return table;
  const from: number[] = [];
  const to: number[] = [];
  for (let c = 0; c <= MAX_CODE_POINT; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue; // lone surrogates have no case
    const f = lowerOnce(c);
    if (f === c) continue;
    let g = f;
    for (let k = 0; k < 4; k++) {
      const h = lowerOnce(g);
      if (h === g) break;
      g = h;
    }
    from.push(c);
    to.push(g);
  }
  table = {
    changed: fromRanges(from.map((c) => [c, c] as const)),
    from: Int32Array.from(from),
    to: Int32Array.from(to),
  };
  return table;
}

function lowerOnce(c: number): number {
  const lower = String.fromCodePoint(c).toLowerCase();
  const first = lower.codePointAt(0)!;
  return lower.length === (first > 0xffff ? 2 : 1) ? first : c;
}

export function foldCodePoint(c: number): number {
  if (c < 0x80) return c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
  const t = foldTable();
  let lo = 0;
  let hi = t.from.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = t.from[mid]!;
    if (v === c) return t.to[mid]!;
    if (v < c) lo = mid + 1;
    else hi = mid - 1;
  }
  return c;
}

/** The image of a set under folding: `{ fold(c) : c in s }`. */
export function foldSet(s: CharSet): CharSet {
  const t = foldTable();
  const moved = intersect(s, t.changed);
  if (moved.length === 0) return s;
  const images: Array<[number, number]> = [];
  for (let i = 0; i < moved.length; i += 2) {
    for (let c = moved[i]!; c <= moved[i + 1]!; c++) {
      const f = foldCodePoint(c);
      images.push([f, f]);
    }
  }
  return union(subtract(s, t.changed), fromRanges(images));
}

/** The smallest code point in `[lo, hi]` that folds to itself, or -1. */
export function firstFoldedIn(lo: number, hi: number): number {
  const changed = foldTable().changed;
  let c = lo;
  while (c <= hi) {
    const at = intervalIndex(changed, c);
    if (at < 0) return c;
    c = changed[at + 1]! + 1;
  }
  return -1;
}
