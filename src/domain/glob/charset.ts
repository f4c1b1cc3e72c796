// Sets of characters as sorted, disjoint, inclusive code-point intervals.
//
// The overlap engine has to intersect what two patterns accept at each step (`[a-f]` against
// `[!c]`, `?` against a literal) and then pick one concrete character from the result for the
// witness. Intervals make a negated class or `?` a couple of numbers instead of a million-entry
// table, and keep intersection linear in the (tiny) number of intervals.

/** A flat list `[lo0, hi0, lo1, hi1, ...]`: sorted, disjoint, non-adjacent, inclusive. */
export type CharSet = readonly number[];

export const MAX_CODE_POINT = 0x10ffff;
export const SLASH = 0x2f;
export const DOT = 0x2e;

export const EMPTY_SET: CharSet = [];
export const SLASH_SET: CharSet = [SLASH, SLASH];
/** What `?`, `*` and every class may match: one character of a segment, never the separator. */
export const SEGMENT_CHAR_SET: CharSet = [0, SLASH - 1, SLASH + 1, MAX_CODE_POINT];

export function singleton(c: number): CharSet {
  return [c, c];
}

/** Builds a set from possibly overlapping, unordered `[lo, hi]` ranges. */
export function fromRanges(ranges: ReadonlyArray<readonly [number, number]>): CharSet {
  const sorted = [...ranges].sort((x, y) => x[0] - y[0]);
  const out: number[] = [];
  for (const [lo, hi] of sorted) {
    const last = out.length - 1;
    if (last > 0 && lo <= out[last]! + 1) {
      if (hi > out[last]!) out[last] = hi;
    } else {
      out.push(lo, hi);
    }
  }
  return out;
}

export function has(s: CharSet, c: number): boolean {
  return intervalIndex(s, c) >= 0;
}

/** The index of the `lo` of the interval holding `c`, or -1 (binary search: the case-folding
 *  table has hundreds of intervals). */
export function intervalIndex(s: CharSet, c: number): number {
  let lo = 0;
  let hi = s.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (c < s[2 * mid]!) hi = mid - 1;
    else if (c > s[2 * mid + 1]!) lo = mid + 1;
    else return 2 * mid;
  }
  return -1;
}

export function intersect(a: CharSet, b: CharSet): CharSet {
  // The common case in a product step is two single intervals (a literal against a literal,
  // or a literal against `*`): answer it without allocating a loop's worth of state.
  if (a.length === 2 && b.length === 2) {
    const lo = a[0]! > b[0]! ? a[0]! : b[0]!;
    const hi = a[1]! < b[1]! ? a[1]! : b[1]!;
    return lo <= hi ? [lo, hi] : EMPTY_SET;
  }
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i]!, b[j]!);
    const hi = Math.min(a[i + 1]!, b[j + 1]!);
    if (lo <= hi) out.push(lo, hi);
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return out;
}

export function union(a: CharSet, b: CharSet): CharSet {
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < a.length; i += 2) ranges.push([a[i]!, a[i + 1]!]);
  for (let i = 0; i < b.length; i += 2) ranges.push([b[i]!, b[i + 1]!]);
  return fromRanges(ranges);
}

export function complement(s: CharSet): CharSet {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < s.length; i += 2) {
    if (s[i]! > next) out.push(next, s[i]! - 1);
    next = s[i + 1]! + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}

export function subtract(a: CharSet, b: CharSet): CharSet {
  return intersect(a, complement(b));
}
