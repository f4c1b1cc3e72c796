// Glob syntax to a small tree: tokens in sequence, with `{a,b}` kept as branches.
//
// Braces stay a tree (not an expanded list of strings) so that `{a,b}{c,d}{e,f}...` costs the
// sum of its parts rather than their product; the automaton turns the branches into forks.
// Tokens are read before braces are expanded, so `*{*,}` is two single stars, never a `**`.
import { type CharSet, SEGMENT_CHAR_SET, SLASH, SLASH_SET, complement, fromRanges, singleton, subtract } from "./charset.ts";
import { foldCodePoint, foldSet } from "./case-fold.ts";
import { MAX_ALTERNATIVES, MAX_BRACE_DEPTH, MAX_SEGMENTS, MAX_WILDCARD_TAIL, patternError, quotePattern } from "./limits.ts";

export type Token =
  /** One character from `set`; `text` is the character as written when it is a literal (plain
   *  or escaped), null for `?` and classes. */
  | { kind: "char"; set: CharSet; text: string | null }
  /** `*`: any run of characters within a segment. */
  | { kind: "star" }
  /** `**`: zero or more whole segments when it is a segment on its own, else the same as `*`
   *  (so `a**b` is `a*b`, as in bash and picomatch). Whether it stands alone is only known per
   *  branch of the braces around it, so the automaton decides, not the parser. */
  | { kind: "globstar" }
  | { kind: "slash" };

export interface Alternatives {
  kind: "alt";
  branches: Seq[];
}

export type Item = Token | Alternatives;
export type Seq = Item[];

export interface Parsed {
  seq: Seq;
  /** No wildcard, class or brace: the pattern names one path (and, being possibly a directory,
   *  everything below it). */
  literal: boolean;
  /** Leading segments made only of literal characters (folded in case-insensitive mode). */
  literalPrefix: string[];
  /** Characters from the first `*`, `**` or `{` to the end (0 without one): the wildcard tail
   *  that MAX_WILDCARD_TAIL bounds, and with it the cost of an overlap check. */
  wildcardTail: number;
}

const BACKSLASH = 0x5c;

/** True when the pattern has no unescaped `*`, `?`, `[` or `{` (a stray `]`, `}` or `,` is an
 *  ordinary character, as the parser reads it). */
export function isLiteral(p: string): boolean {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === "\\") i++;
    else if (c === "*" || c === "?" || c === "[" || c === "{") return false;
  }
  return true;
}

export function parsePattern(source: string, caseInsensitive: boolean): Parsed {
  let slashes = 0;
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === SLASH) slashes++;
  if (slashes + 1 > MAX_SEGMENTS) {
    throw patternError(
      `pattern has too many segments: at most ${MAX_SEGMENTS}, counting those inside braces (got ${slashes + 1} in ${quotePattern(source)})`,
    );
  }
  const parser = new Parser(source, caseInsensitive);
  const seq = collapseGlobstars(parser.sequence(false), true);
  const tail = parser.firstWildcard < 0 ? 0 : source.length - parser.firstWildcard;
  if (tail > MAX_WILDCARD_TAIL) {
    throw patternError(
      `pattern has too much after its first wildcard: at most ${MAX_WILDCARD_TAIL} characters from the first "*", "**" or "{" ` +
        `to the end (got ${tail} in ${quotePattern(source)}); put literal segments before the first wildcard or claim a shorter pattern`,
    );
  }
  return { seq, literal: isLiteral(source), literalPrefix: literalPrefixOf(seq), wildcardTail: tail };
}

class Parser {
  private i = 0;
  private depth = 0;
  private alternatives = 0;
  /** Offset of the first `*` or `{` (the start of the wildcard tail, see MAX_WILDCARD_TAIL); -1 if none. */
  firstWildcard = -1;

  constructor(
    private readonly src: string,
    private readonly fold: boolean,
  ) {}

  /** Reads items up to the end, or (inside braces) up to the `,` or `}` that ends a branch. */
  sequence(inBraces: boolean): Seq {
    const seq: Seq = [];
    const src = this.src;
    while (this.i < src.length) {
      const c = src.codePointAt(this.i)!;
      if (inBraces && (c === 0x2c || c === 0x7d)) return seq; // `,` or `}`
      switch (c) {
        case SLASH:
          this.i++;
          seq.push({ kind: "slash" });
          break;
        case 0x2a: {
          // `*`: a run of two or more is `**`; longer runs mean nothing more.
          if (this.firstWildcard < 0) this.firstWildcard = this.i;
          let n = 0;
          while (src.charCodeAt(this.i) === 0x2a) {
            this.i++;
            n++;
          }
          seq.push({ kind: n === 1 ? "star" : "globstar" });
          break;
        }
        case 0x3f: // `?`
          this.i++;
          seq.push({ kind: "char", set: SEGMENT_CHAR_SET, text: null });
          break;
        case 0x5b: // `[`
          seq.push({ kind: "char", set: this.charClass(), text: null });
          break;
        case 0x7b: // `{`
          if (this.firstWildcard < 0) this.firstWildcard = this.i;
          seq.push(this.braces());
          break;
        case BACKSLASH: {
          this.i++;
          const e = this.escaped();
          seq.push(this.literal(e));
          break;
        }
        default:
          this.i += c > 0xffff ? 2 : 1;
          seq.push(this.literal(c));
      }
    }
    return seq;
  }

  private literal(c: number): Token {
    return { kind: "char", set: singleton(this.fold ? foldCodePoint(c) : c), text: String.fromCodePoint(c) };
  }

  /** The code point after a backslash (already consumed). */
  private escaped(): number {
    const c = this.src.codePointAt(this.i);
    if (c === undefined) {
      throw patternError(`pattern ends with a lone backslash (${quotePattern(this.src)}); write \\\\ for a backslash`);
    }
    if (c === SLASH) {
      throw patternError(`a "/" cannot be escaped: it always separates segments (in ${quotePattern(this.src)})`);
    }
    this.i += c > 0xffff ? 2 : 1;
    return c;
  }

  private charClass(): CharSet {
    const src = this.src;
    const start = this.i;
    this.i++; // `[`
    let negate = false;
    if (src[this.i] === "!" || src[this.i] === "^") {
      negate = true;
      this.i++;
    }
    const ranges: Array<[number, number]> = [];
    let first = true;
    for (;;) {
      if (this.i >= src.length) {
        throw patternError(`pattern has an unclosed "[" at offset ${start} (${quotePattern(src)}); write \\[ for a literal bracket`);
      }
      if (src[this.i] === "]" && !first) {
        this.i++;
        break;
      }
      first = false;
      if (src[this.i] === "[" && src[this.i + 1] === ":" && /^\[:[a-z]+:\]/.test(src.slice(this.i, this.i + 12))) {
        throw patternError(`POSIX classes such as [:alpha:] are not supported (in ${quotePattern(src)}); list the characters or a range`);
      }
      const lo = this.classMember();
      let hi = lo;
      if (src[this.i] === "-" && this.i + 1 < src.length && src[this.i + 1] !== "]") {
        this.i++;
        hi = this.classMember();
        if (hi < lo) {
          throw patternError(
            `pattern has a reversed range ${String.fromCodePoint(lo)}-${String.fromCodePoint(hi)} in a class (${quotePattern(src)})`,
          );
        }
      }
      ranges.push([lo, hi]);
    }
    let set = fromRanges(ranges);
    if (this.fold) set = foldSet(set);
    if (negate) set = complement(set);
    // A class is within one segment: even `[!a]` or a range across `/` never matches it.
    return subtract(set, SLASH_SET);
  }

  private classMember(): number {
    let c = this.src.codePointAt(this.i)!;
    if (c === BACKSLASH) {
      this.i++;
      if (this.i >= this.src.length) {
        throw patternError(`pattern has an unclosed "[" (${quotePattern(this.src)})`);
      }
      c = this.escaped();
    } else {
      this.i += c > 0xffff ? 2 : 1;
    }
    if (c === SLASH) {
      // Refused rather than silently dropped: `[/]` can never match, and normalizing the text
      // would otherwise split the class as if it were two segments.
      throw patternError(`a character class cannot contain "/" (in ${quotePattern(this.src)})`);
    }
    return c;
  }

  private braces(): Alternatives {
    const start = this.i;
    this.i++; // `{`
    if (++this.depth > MAX_BRACE_DEPTH) {
      throw patternError(`pattern nests braces too deeply: at most ${MAX_BRACE_DEPTH} levels (in ${quotePattern(this.src)})`);
    }
    const branches: Seq[] = [];
    for (;;) {
      branches.push(this.sequence(true));
      if (++this.alternatives > MAX_ALTERNATIVES) {
        throw patternError(
          `pattern has too many brace alternatives: at most ${MAX_ALTERNATIVES} in total (in ${quotePattern(this.src)})`,
        );
      }
      const c = this.src[this.i];
      if (c === undefined) {
        throw patternError(`pattern has an unclosed "{" at offset ${start} (${quotePattern(this.src)}); write \\{ for a literal brace`);
      }
      this.i++;
      if (c === "}") break;
    }
    this.depth--;
    return { kind: "alt", branches: branches.map((b) => collapseGlobstars(b, false)) };
  }
}

/**
 * Drops a `**` segment directly followed by another (`a/**\/**\/b` is `a/**\/b`) so long runs cost
 * nothing. Only done where both are certainly whole segments: at the ends of a branch, what
 * comes before or after depends on the surrounding braces.
 */
function collapseGlobstars(seq: Seq, topLevel: boolean): Seq {
  const out: Seq = [];
  for (let i = 0; i < seq.length; i++) {
    const item = seq[i]!;
    const isPair =
      item.kind === "globstar" &&
      seq[i + 1]?.kind === "slash" &&
      seq[i + 2]?.kind === "globstar" &&
      (i + 3 === seq.length ? topLevel : seq[i + 3]!.kind === "slash") &&
      (out.length === 0 ? topLevel : out[out.length - 1]!.kind === "slash");
    if (isPair) {
      i++; // skip this `**` and its `/`; the next `**` is examined in turn
      continue;
    }
    out.push(item);
  }
  return out;
}

function literalPrefixOf(seq: Seq): string[] {
  const prefix: string[] = [];
  let segment = "";
  for (const item of seq) {
    if (item.kind === "slash") {
      if (segment !== "") prefix.push(segment);
      segment = "";
    } else if (item.kind === "char" && item.text !== null) {
      // The folded text is what every matching (folded) path has at this segment.
      segment += String.fromCodePoint(item.set[0]!);
    } else {
      return prefix;
    }
  }
  if (segment !== "") prefix.push(segment);
  return prefix;
}
