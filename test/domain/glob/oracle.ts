// A reference matcher for path-claim globs, written independently of src/domain/glob.
//
// The engine compiles patterns to automata and decides overlap on their product; this file does
// the obvious slow thing instead, so the two can check each other: expand every brace into plain
// token lists, translate each to one regular expression over the path (segment by segment, with
// `**` as `(?:[^/]+/)*` against the path plus a trailing `/`, which is what makes zero segments
// work), and try them all. It only needs to be right on the small patterns the tests generate.

type Tok =
  | { t: "lit"; cp: number }
  | { t: "any" }
  | { t: "class"; negate: boolean; ranges: Array<[number, number]> }
  | { t: "star" }
  | { t: "dstar" }
  | { t: "sep" };

/** Simple lowercase when it is one code point, repeated until stable (the spec's fold). */
export function oracleFold(cp: number): number {
  let s = String.fromCodePoint(cp);
  for (let k = 0; k < 4; k++) {
    const l = s.toLowerCase();
    if (l === s || Array.from(l).length !== 1) break;
    s = l;
  }
  return s.codePointAt(0)!;
}

function foldPath(p: string): string {
  return Array.from(p, (ch) => String.fromCodePoint(oracleFold(ch.codePointAt(0)!))).join("");
}

/** All brace expansions of a pattern as token lists (tokens are read before expansion). */
export function expansions(pattern: string): Tok[][] {
  const cps = Array.from(pattern, (ch) => ch.codePointAt(0)!);
  let i = 0;
  const ch = (k: number) => (k < cps.length ? String.fromCodePoint(cps[k]!) : "");

  function seq(inBrace: boolean): Tok[][] {
    let acc: Tok[][] = [[]];
    const add = (tok: Tok) => {
      for (const e of acc) e.push(tok);
    };
    while (i < cps.length) {
      const c = ch(i);
      if (inBrace && (c === "," || c === "}")) break;
      if (c === "\\") {
        add({ t: "lit", cp: cps[i + 1]! });
        i += 2;
      } else if (c === "*") {
        let n = 0;
        while (ch(i) === "*") {
          n++;
          i++;
        }
        add(n >= 2 ? { t: "dstar" } : { t: "star" });
      } else if (c === "?") {
        add({ t: "any" });
        i++;
      } else if (c === "/") {
        add({ t: "sep" });
        i++;
      } else if (c === "[") {
        i++;
        let negate = false;
        if (ch(i) === "!" || ch(i) === "^") {
          negate = true;
          i++;
        }
        const ranges: Array<[number, number]> = [];
        let first = true;
        while (first || ch(i) !== "]") {
          first = false;
          let lo = cps[i]!;
          if (ch(i) === "\\") lo = cps[++i]!;
          i++;
          let hi = lo;
          if (ch(i) === "-" && ch(i + 1) !== "]" && i + 1 < cps.length) {
            i++;
            hi = cps[i]!;
            if (ch(i) === "\\") hi = cps[++i]!;
            i++;
          }
          ranges.push([lo, hi]);
        }
        i++; // ]
        add({ t: "class", negate, ranges });
      } else if (c === "{") {
        i++;
        const branches: Tok[][] = [];
        for (;;) {
          branches.push(...seq(true));
          const close = ch(i);
          i++;
          if (close === "}") break;
        }
        const next: Tok[][] = [];
        for (const a of acc) for (const b of branches) next.push([...a, ...b]);
        acc = next;
      } else {
        add({ t: "lit", cp: cps[i]! });
        i++;
      }
    }
    return acc;
  }
  return seq(false);
}

function literalPattern(pattern: string): boolean {
  return !/(^|[^\\])(\\\\)*[*?[{]/.test(pattern);
}

function escapeCp(cp: number): string {
  return `\\u{${cp.toString(16)}}`;
}

function classSource(tok: Extract<Tok, { t: "class" }>, ci: boolean): string {
  let body = "";
  if (ci) {
    const image = new Set<number>();
    for (const [lo, hi] of tok.ranges) for (let c = lo; c <= hi; c++) image.add(oracleFold(c));
    for (const c of image) body += escapeCp(c);
  } else {
    for (const [lo, hi] of tok.ranges) body += `${escapeCp(lo)}-${escapeCp(hi)}`;
  }
  return `(?!/)[${tok.negate ? "^" : ""}${body}]`;
}

function regexFor(toks: Tok[], ci: boolean): RegExp {
  const segments: Tok[][] = [[]];
  for (const tok of toks) {
    if (tok.t === "sep") segments.push([]);
    else segments[segments.length - 1]!.push(tok);
  }
  let src = "^";
  for (const seg of segments) {
    if (seg.length === 0) continue;
    if (seg.length === 1 && seg[0]!.t === "dstar") {
      src += "(?:[^/]+/)*";
      continue;
    }
    src += "(?=[^/])";
    for (const tok of seg) {
      if (tok.t === "lit") src += escapeCp(ci ? oracleFold(tok.cp) : tok.cp);
      else if (tok.t === "any") src += "[^/]";
      else if (tok.t === "star" || tok.t === "dstar") src += "[^/]*";
      else if (tok.t === "class") src += classSource(tok, ci);
    }
    src += "/";
  }
  return new RegExp(`${src}$`, "u");
}

/** A normalized path: non-empty, no empty, `.` or `..` segments. */
export function isValidPath(p: string): boolean {
  if (p === "") return false;
  return p.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

export interface OraclePattern {
  source: string;
  test(path: string): boolean;
}

export function oracle(pattern: string, ci = false): OraclePattern {
  const literal = literalPattern(pattern);
  const regexes = expansions(pattern).map((toks) =>
    regexFor(literal ? [...toks, { t: "sep" }, { t: "dstar" }] : toks, ci),
  );
  return {
    source: pattern,
    test(path: string): boolean {
      if (!isValidPath(path)) return false;
      const subject = `${ci ? foldPath(path) : path}/`;
      return regexes.some((r) => r.test(subject));
    },
  };
}

/** Expansions as token lists, for generating matching paths. */
export type OracleToken = Tok;
