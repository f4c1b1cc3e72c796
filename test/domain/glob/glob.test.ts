import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../../src/errors.ts";
import { compileGlob, isLiteral, matches, overlap } from "../../../src/domain/glob/index.ts";
import { automatonOf } from "../../../src/domain/glob/compile.ts";
import { slashRange } from "../../../src/domain/glob/segments.ts";

const ov = (a: string, b: string, caseInsensitive = false) =>
  overlap(compileGlob(a, { caseInsensitive }), compileGlob(b, { caseInsensitive }));
const m = (pattern: string, path: string, caseInsensitive = false) => matches(compileGlob(pattern, { caseInsensitive }), path);

/** The witness, checked to be a path both patterns match, or null. */
function witness(a: string, b: string, caseInsensitive = false): string | null {
  const w = ov(a, b, caseInsensitive);
  expect(ov(b, a, caseInsensitive) === null).toBe(w === null);
  if (w !== null) {
    expect(m(a, w, caseInsensitive)).toBe(true);
    expect(m(b, w, caseInsensitive)).toBe(true);
    expect(w.split("/").every((s) => s !== "" && s !== "." && s !== "..")).toBe(true);
  }
  return w;
}

function refused(fn: () => unknown, rule: RegExp) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AirlockError);
    expect((err as AirlockError).code).toBe("invalid_argument");
    expect((err as Error).message).toMatch(rule);
    return;
  }
  throw new Error(`expected a refusal matching ${rule}`);
}

describe("the spec's examples", () => {
  test("src/api/** overlaps src/api/users/route.ts", () => {
    expect(witness("src/api/**", "src/api/users/route.ts")).toBe("src/api/users/route.ts");
  });
  test("src/api/** and src/web/** do not overlap", () => {
    expect(witness("src/api/**", "src/web/**")).toBeNull();
  });
  test("src/**/api matches src/api", () => {
    expect(m("src/**/api", "src/api")).toBe(true);
  });
  test("src/*.ts and src/a* overlap on src/a.ts", () => {
    expect(witness("src/*.ts", "src/a*")).toBe("src/a.ts");
  });
  test("src/**/*.ts and src/**/*.md do not overlap", () => {
    expect(witness("src/**/*.ts", "src/**/*.md")).toBeNull();
  });
  test("src/api/** covers src/api itself", () => {
    expect(witness("src/api/**", "src/api")).toBe("src/api");
  });
  test("src/a*/** covers src/ab: ** may be zero segments whatever precedes it", () => {
    expect(m("src/a*/**", "src/ab")).toBe(true);
    expect(witness("src/a*/**", "src/ab")).toBe("src/ab");
  });
  test("a literal path covers everything below it", () => {
    expect(witness("src/api", "src/api/users/route.ts")).toBe("src/api/users/route.ts");
    expect(m("src/api", "src/api/users")).toBe(true);
    expect(m("src/api", "src/apis")).toBe(false);
  });
});

describe("Befall's regression cases, verbatim", () => {
  // pathsOverlap("src/**/api", "src/api")           // → true  (** collapses to nothing)
  // pathsOverlap("src/**/api", "src/foo/api")       // → true
  // pathsOverlap("src/**/api", "src/foo/bar/api")   // → true
  // pathsOverlap("src/api/**", "src/web/**")        // → false
  const pathsOverlap = (a: string, b: string) => witness(a, b) !== null;
  test("** must match zero segments as well as many", () => {
    expect(pathsOverlap("src/**/api", "src/api")).toBe(true);
    expect(pathsOverlap("src/**/api", "src/foo/api")).toBe(true);
    expect(pathsOverlap("src/**/api", "src/foo/bar/api")).toBe(true);
  });
  test("disjoint subtrees do not overlap", () => {
    expect(pathsOverlap("src/api/**", "src/web/**")).toBe(false);
  });
});

describe("segments", () => {
  test("* matches at least one character when it is a whole segment", () => {
    expect(m("src/*", "src/a")).toBe(true);
    expect(m("src/*", "src")).toBe(false);
    expect(m("a/*/b", "a/b")).toBe(false);
    expect(m("a/*/b", "a/x/b")).toBe(true);
  });
  test("* and ? never cross a /", () => {
    expect(m("a*", "ab/c")).toBe(false);
    expect(m("a?c", "a/c")).toBe(false);
    expect(witness("a?c", "a/**")).toBeNull();
    expect(witness("a?c", "*c")).toBe("aac");
  });
  test("** between segments matches zero, one or many of them", () => {
    for (const p of ["a/b", "a/x/b", "a/x/y/b"]) expect(m("a/**/b", p)).toBe(true);
    expect(m("a/**/b", "ab")).toBe(false);
  });
  test("**/x at the start matches x at any depth, including the top", () => {
    expect(m("**/x", "x")).toBe(true);
    expect(m("**/x", "a/b/x")).toBe(true);
    expect(m("**/x", "a/xb")).toBe(false);
  });
  test("** that is not a whole segment behaves as *", () => {
    expect(m("a**b", "axyb")).toBe(true);
    expect(m("a**b", "ax/yb")).toBe(false);
    expect(m("**b/c", "x/yb/c")).toBe(false);
    expect(m("**b/c", "yb/c")).toBe(true);
  });
  test("runs of stars and repeated ** segments collapse", () => {
    expect(m("a***b", "axb")).toBe(true);
    for (const p of ["a/b", "a/x/b", "a/x/y/z/b"]) expect(m("a/**/**/**/b", p)).toBe(true);
  });
  test("a pattern ending in a literal segment does not cover what is below it", () => {
    expect(m("src/*/api", "src/x/api")).toBe(true);
    expect(m("src/*/api", "src/x/api/users")).toBe(false);
  });
});

describe("classes, braces and escapes", () => {
  test("a class takes ranges, ! and ^ negation, and a leading ] or trailing - literally", () => {
    expect(m("[a-c]x", "bx")).toBe(true);
    expect(m("[!a-c]x", "bx")).toBe(false);
    expect(m("[^a-c]x", "dx")).toBe(true);
    expect(m("[]a]", "]")).toBe(true);
    expect(m("[a-]", "-")).toBe(true);
    expect(m("[\\]]", "]")).toBe(true);
  });
  test("even a negated class never matches /", () => {
    expect(witness("a[!x]b", "a/b")).toBeNull();
  });
  test("classes intersect exactly", () => {
    expect(witness("[a-f]", "[!a-e]")).toBe("f");
    expect(witness("[a-c]", "[d-f]")).toBeNull();
  });
  test("braces are alternatives that may nest and hold / and other syntax", () => {
    expect(witness("{src/api,lib}/**", "src/api/x")).toBe("src/api/x");
    expect(m("{a,{b,c/d}}/e", "c/d/e")).toBe(true);
    expect(m("x/{*.ts,**/y}", "x/p/q/y")).toBe(true);
    expect(m("x/{*.ts,**/y}", "x/y")).toBe(true);
    expect(witness("{a,b}*", "c*")).toBeNull();
  });
  test("** inside braces is a globstar only in branches where it is a whole segment", () => {
    expect(m("{**,x}/b", "p/q/b")).toBe(true);
    expect(m("{**,x}/b", "b")).toBe(true);
    expect(m("a{**,}", "abc")).toBe(true);
    expect(m("a{**,}", "a/c")).toBe(false);
  });
  test("an empty brace branch leaves no empty segment", () => {
    expect(m("a/{,x/}b", "a/b")).toBe(true);
    expect(m("a/{,x/}b", "a/x/b")).toBe(true);
    expect(m("a/{*,}/b", "a/b")).toBe(true);
  });
  test("{} is one empty branch, {a} one branch, and a stray } or , is an ordinary character", () => {
    expect(m("a{}b", "ab")).toBe(true);
    expect(m("{a}", "a")).toBe(true);
    expect(m("a}b,c", "a}b,c")).toBe(true);
  });
  test("a backslash escapes glob syntax", () => {
    expect(m("\\*", "*")).toBe(true);
    expect(m("\\*", "a")).toBe(false);
    expect(m("a\\{b,c}", "a{b,c}")).toBe(true);
  });
  test("? and classes take a whole code point, beyond the BMP too", () => {
    expect(m("?", "😀")).toBe(true);
    expect(witness("[😀-😂]", "?")).toBe("😀");
  });
});

describe("witnesses", () => {
  test("prefer a plain letter and a visible name", () => {
    expect(witness("*", "*")).toBe("a");
    expect(witness("src/**", "src/*.ts")).toBe("src/a.ts");
    expect(witness("[!a-z0-9]", "*")).toBe("A");
  });
  test("are never . or .. segments", () => {
    expect(witness("?", "{.,..}")).toBeNull();
    expect(witness("a/{.,..,.b}/c", "a/*/c")).toBe("a/.b/c");
  });
  test("contain a glob character only when every common path has one", () => {
    expect(witness("[*a]", "[*a]")).toBe("a");
    expect(witness("\\*", "[*]")).toBe("*");
    expect(witness("x/\\[*", "x/*")).toBe("x/[");
  });
});

describe("case-insensitive rooms", () => {
  test("compare folded, and give a folded witness", () => {
    expect(witness("SRC/*.TS", "src/a*", true)).toBe("src/a.ts");
    expect(witness("SRC/*.TS", "src/a*")).toBeNull();
    expect(m("Src/**", "sRC/x", true)).toBe(true);
    expect(m("Ä*", "äx", true)).toBe(true);
    expect(m("[!k]", "\u212a", true)).toBe(false); // KELVIN SIGN folds to k
  });
  test("a negated class excludes both cases", () => {
    expect(m("[!k]", "K", true)).toBe(false);
    expect(m("[A-C]", "b", true)).toBe(true);
    expect(witness("[!k]", "[kK]", true)).toBeNull();
  });
  test("both patterns of a check must use the same case option", () => {
    expect(() => overlap(compileGlob("a"), compileGlob("a", { caseInsensitive: true }))).toThrow(AirlockError);
  });
});

describe("literal prefixes and literals", () => {
  test("literalPrefix holds the leading segments without glob syntax", () => {
    expect(compileGlob("src/api/**").literalPrefix).toEqual(["src", "api"]);
    expect(compileGlob("src/api").literalPrefix).toEqual(["src", "api"]);
    expect(compileGlob("src/a*/x").literalPrefix).toEqual(["src"]);
    expect(compileGlob("{a,b}/c").literalPrefix).toEqual([]);
    expect(compileGlob("a\\*b/c*").literalPrefix).toEqual(["a*b"]);
    expect(compileGlob("Src/API/*", { caseInsensitive: true }).literalPrefix).toEqual(["src", "api"]);
  });
  test("isLiteral is true only without unescaped *, ?, [ or {", () => {
    expect(isLiteral("src/api/route.ts")).toBe(true);
    expect(isLiteral("a\\*b")).toBe(true);
    expect(isLiteral("a]b},c")).toBe(true);
    for (const p of ["a*", "a?", "[ab]", "{a,b}", "a\\\\*"]) expect(isLiteral(p)).toBe(false);
  });
  test("an escaped literal still covers what is below it", () => {
    expect(m("a\\*b", "a*b/c")).toBe(true);
  });
});

describe("compiling", () => {
  test("normalizes the pattern and reuses the compiled form", () => {
    const g = compileGlob("./src//api/");
    expect(g.source).toBe("src/api");
    expect(compileGlob("./src//api/")).toBe(g);
    expect(compileGlob("./src//api/", { caseInsensitive: true })).not.toBe(g);
  });
  test("matches normalizes the path and refuses ..", () => {
    expect(m("src/**", "./src//a/")).toBe(true);
    refused(() => m("src/**", "src/../etc"), /"\.\." segments/);
  });
  test("malformed patterns are refused with the rule broken", () => {
    refused(() => compileGlob("a[bc"), /unclosed "\["/);
    refused(() => compileGlob("a{b,c"), /unclosed "\{"/);
    refused(() => compileGlob("a\\"), /lone backslash/);
    refused(() => compileGlob("a\\/b"), /cannot be escaped/);
    refused(() => compileGlob("a[/]b"), /class cannot contain "\/"/);
    refused(() => compileGlob("[z-a]"), /reversed range/);
    refused(() => compileGlob("[[:alpha:]]"), /POSIX classes/);
  });
});

describe("segment counts", () => {
  const pathsOverlap = (a: string, b: string) => witness(a, b) !== null;
  test("the fewest and most separators a pattern's paths can have, Infinity where ** or a literal's subtree allows", () => {
    const range = (p: string) => slashRange(automatonOf(compileGlob(p)));
    expect(range("src/*.ts")).toEqual({ min: 1, max: 1 });
    expect(range("*/fixtures/*")).toEqual({ min: 2, max: 2 });
    expect(range("a/{b,c/d}/e")).toEqual({ min: 2, max: 3 });
    expect(range("src/**/a")).toEqual({ min: 1, max: Number.POSITIVE_INFINITY });
    expect(range("src")).toEqual({ min: 0, max: Number.POSITIVE_INFINITY });
    expect(range("{a,a/b/c}")).toEqual({ min: 0, max: 2 });
  });

  test("patterns whose segment counts cannot meet are disjoint", () => {
    expect(pathsOverlap("*/fixtures/*", "pkg/src/mod/index.ts")).toBe(false);
    expect(pathsOverlap("*/fixtures/*", "pkg/fixtures/x")).toBe(true);
    expect(pathsOverlap("a/{b,c/d}/e", "a/*/*/*/e")).toBe(false);
    expect(pathsOverlap("a/{b,c/d}/e", "a/*/*/e")).toBe(true);
  });
});
