// Hostile patterns: the bounds refuse what is too big, and whatever is accepted compiles and is
// compared within the work the engine's limits promise. The work is counted, not timed: each
// overlap decision is charged one step per product state it settles (the same CheckBudget a call
// is charged), and that count is held to the bound derived from the two patterns' sizes in
// limits.ts (MAX_WILDCARD_TAIL). Timings are printed; the only timed assertion is a budget of
// seconds that a loaded machine holds and only a blow-up of the work per step would break.
import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../../src/errors.ts";
import {
  type CompiledGlob,
  MAX_ALTERNATIVES,
  MAX_AUTOMATON_STATES,
  MAX_BRACE_DEPTH,
  MAX_CHECK_STEPS,
  MAX_PATTERN_LENGTH,
  MAX_SEGMENTS,
  MAX_WILDCARD_TAIL,
  compileGlob,
  overlap,
} from "../../../src/domain/glob/index.ts";
import { automatonOf } from "../../../src/domain/glob/compile.ts";
import { parsePattern } from "../../../src/domain/glob/parse.ts";

// The worst pair within the bounds takes about 10 ms on an idle machine (and 30 ms with other
// suites running); this is for a blow-up in the cost of a step, which counting cannot see.
const SANITY_MS = 2_000;

/** Product states one overlap decision settles: what it charges a call's budget. */
function stepsOf(a: CompiledGlob, b: CompiledGlob): { steps: number; witness: string | null } {
  const budget = { left: Number.MAX_SAFE_INTEGER }; // counted, never exhausted
  const witness = overlap(a, b, budget);
  return { steps: Number.MAX_SAFE_INTEGER - budget.left, witness };
}

/**
 * What limits.ts promises for one decision: reachable pairs <= min(|A|, |B|) + |tail(A)| x |B| +
 * |A| x |tail(B)|, times 4 for the `.`/`..` guard, times 3 for the searches a decision may run
 * (overlap.ts repeats it to avoid glob characters in the witness). A tail of W characters has at
 * most 2W + 4 states (and never more than the whole automaton).
 */
function promisedSteps(a: CompiledGlob, b: CompiledGlob): number {
  const sizeA = automatonOf(a).size;
  const sizeB = automatonOf(b).size;
  const tailStates = (g: CompiledGlob, size: number) => Math.min(size, 2 * parsePattern(g.source, g.caseInsensitive).wildcardTail + 4);
  return 3 * 4 * (Math.min(sizeA, sizeB) + tailStates(a, sizeA) * sizeB + sizeA * tailStates(b, sizeB));
}

function refusedWith(pattern: string, rule: RegExp) {
  try {
    compileGlob(pattern);
  } catch (err) {
    expect(err).toBeInstanceOf(AirlockError);
    expect((err as AirlockError).code).toBe("invalid_argument");
    expect((err as Error).message).toMatch(rule);
    expect((err as Error).message.length).toBeLessThan(400); // a huge pattern is quoted short
    return;
  }
  throw new Error(`expected ${pattern.slice(0, 40)} to be refused`);
}

const nested = (depth: number) => "{a,".repeat(depth) + "b" + "}".repeat(depth);
const alternatives = (n: number) => `{${Array.from({ length: n }, (_, i) => i.toString(36)).join(",")}}`;

const fit = (unit: string, n: number) => unit.repeat(Math.floor(n / unit.length));
const TAIL = MAX_WILDCARD_TAIL;
/** A head that uses the rest of the length: literal characters, `?` or classes, no wildcard. */
const head = (unit: string, tail: string) => fit(unit, MAX_PATTERN_LENGTH - tail.length) + tail;

/** The worst patterns we could build within the bounds: tails of wildcards as long as allowed,
 *  alone or after a head that fills the pattern (a head costs nothing on its own, but makes the
 *  other side's tail pair with a thousand states). */
const HOSTILE: Record<string, string> = {
  "*a tail": fit("*a", TAIL),
  "*? tail": fit("*?", TAIL),
  "*. tail": fit("*.", TAIL),
  "*\\* tail": fit("*\\*", TAIL),
  "[!a]* tail": fit("[!a]*", TAIL),
  "**/ tail": `${fit("**/", TAIL - 1)}x`,
  "{**,a}/ tail": fit("{**,a}/", TAIL),
  "{*/,**/,a*} tail": fit("{*/,**/,a*}", TAIL),
  "{a,aa} tail": fit("{a,aa}", TAIL),
  "{*a,a*} tail": fit("{*a,a*}", TAIL),
  "braces at full depth": nested(MAX_BRACE_DEPTH) + fit("*a", TAIL - nested(MAX_BRACE_DEPTH).length),
  "{,} tail": `${fit("{,}", TAIL - 1)}a`,
  "long literal": "abcdefghijklmno/".repeat(64).slice(0, MAX_PATTERN_LENGTH - 1),
  "? x1024": "?".repeat(MAX_PATTERN_LENGTH),
  "a head, *a tail": head("a", fit("*a", TAIL)),
  "? head, *? tail": head("?", fit("*?", TAIL)),
  "? head, *\\* tail": head("?", fit("*\\*", TAIL)),
  "[*] head, *\\* tail": head("[*]", fit("*\\*", TAIL)),
  ". head, *. tail": head(".", fit("*.", TAIL)),
  "segments head, **/ tail": `${"abcdefghijklmn/".repeat(MAX_SEGMENTS - 13)}${fit("**/*a", TAIL - 2)}*a`,
};

describe("hostile patterns", () => {
  test("compile and compare within the work the bounds promise, pairwise", () => {
    const globs = Object.entries(HOSTILE).map(([name, p]) => {
      expect(p.length).toBeLessThanOrEqual(MAX_PATTERN_LENGTH);
      const t0 = performance.now();
      const g = compileGlob(p);
      const ms = performance.now() - t0;
      // At most two states per pattern character, plus the start and a literal's implied `/**`.
      expect(automatonOf(g).size).toBeLessThanOrEqual(2 * g.source.length + 16);
      expect(ms).toBeLessThan(SANITY_MS);
      return { name, g, ms };
    });
    const lines = globs.map(({ name, g, ms }) => `  ${name}: ${automatonOf(g).size} states, compiled in ${ms.toFixed(1)} ms`);
    let worst = { steps: 0, promised: 0, pair: "" };
    let slowest = { ms: 0, pair: "" };
    for (const a of globs) {
      for (const b of globs) {
        const pair = `${a.name} vs ${b.name}`;
        const t0 = performance.now();
        const { steps } = stepsOf(a.g, b.g);
        const ms = performance.now() - t0;
        const promised = promisedSteps(a.g, b.g);
        if (steps > promised) throw new Error(`${pair}: ${steps} product states settled, more than the ${promised} the bounds promise`);
        // A check against one worst-case claim fits in a call's budget: it is answered, not refused.
        if (steps > MAX_CHECK_STEPS) throw new Error(`${pair}: ${steps} product states, more than a call's ${MAX_CHECK_STEPS}`);
        expect(ms).toBeLessThan(SANITY_MS);
        if (steps > worst.steps) worst = { steps, promised, pair };
        if (ms > slowest.ms) slowest = { ms, pair };
      }
    }
    console.log(
      `hostile patterns:\n${lines.join("\n")}\n  most work in one overlap decision: ${worst.pair}, ${worst.steps} product states ` +
        `(${worst.promised} promised)\n  slowest overlap decision: ${slowest.pair}, ${slowest.ms.toFixed(2)} ms`,
    );
  }, 60_000);

  test("**/ repeated through the whole tail still matches at any depth", () => {
    const g = compileGlob(HOSTILE["**/ tail"]!);
    expect(overlap(g, compileGlob("x"))).toBe("x");
    expect(overlap(g, compileGlob("a/b/c/x"))).toBe("a/b/c/x");
    expect(overlap(g, compileGlob("a/*/c/y"))).toBeNull();
  });

  test("*a*a*a... against *b*b*b... is decided without backtracking blow-up", () => {
    const a = compileGlob(HOSTILE["*a tail"]!);
    expect(overlap(a, compileGlob(fit("*b", TAIL)))).toBeNull();
    expect(overlap(a, compileGlob("a".repeat(TAIL / 2)))).toBe("a".repeat(TAIL / 2));
    const long = compileGlob(HOSTILE["a head, *a tail"]!);
    expect(overlap(a, long)).toBe("a".repeat(MAX_PATTERN_LENGTH - TAIL / 2));
  });
});

describe("bounds on patterns", () => {
  test("a pattern longer than MAX_PATTERN_LENGTH is refused", () => {
    compileGlob("a".repeat(MAX_PATTERN_LENGTH));
    refusedWith("a".repeat(MAX_PATTERN_LENGTH + 1), /too long: at most 1024 characters/);
    refusedWith("*".repeat(1_000_000), /too long/);
  });

  test("more than MAX_SEGMENTS segments are refused, counting those inside braces", () => {
    compileGlob(Array(MAX_SEGMENTS).fill("a").join("/"));
    refusedWith(Array(MAX_SEGMENTS + 1).fill("a").join("/"), /too many segments: at most 64/);
    refusedWith(`{${Array(MAX_SEGMENTS + 1).fill("a").join("/")},b}`, /too many segments/);
  });

  test("braces nested deeper than MAX_BRACE_DEPTH are refused", () => {
    compileGlob(nested(MAX_BRACE_DEPTH));
    compileGlob(`src/${nested(MAX_BRACE_DEPTH)}`);
    refusedWith(nested(MAX_BRACE_DEPTH + 1), /nests braces too deeply: at most 8 levels/);
  });

  test("more than MAX_ALTERNATIVES brace alternatives in total are refused", () => {
    // A tail of MAX_WILDCARD_TAIL characters holds at most that many alternatives (`{,,,}`), so
    // since that bound this one is only reached by a pattern refused for its tail anyway.
    compileGlob(`{${",".repeat(TAIL - 2)}}`);
    refusedWith(alternatives(MAX_ALTERNATIVES + 1), /too many brace alternatives: at most 256/);
    refusedWith("{a,b}".repeat(MAX_ALTERNATIVES / 2 + 1), /too many brace alternatives/);
  });

  test("no pattern within the other bounds comes near MAX_AUTOMATON_STATES", () => {
    // Each pattern character yields at most two states, so the state bound is a safety net.
    for (const p of Object.values(HOSTILE)) {
      expect(automatonOf(compileGlob(p)).size).toBeLessThanOrEqual(MAX_AUTOMATON_STATES);
    }
    expect(automatonOf(compileGlob(HOSTILE["long literal"]!)).size).toBeGreaterThan(MAX_PATTERN_LENGTH);
  });
});

describe("the wildcard tail", () => {
  test("a pattern with more than MAX_WILDCARD_TAIL characters from its first wildcard is refused, naming the rule", () => {
    compileGlob(`*${"a".repeat(TAIL - 1)}`);
    refusedWith(`*${"a".repeat(TAIL)}`, /too much after its first wildcard: at most 64 characters from the first "\*", "\*\*" or "\{"/);
    refusedWith(`src/{a,b}/${"c".repeat(TAIL)}`, /after its first wildcard: at most 64 .*got 70/);
    refusedWith(`src/${fit("**/x", TAIL + 4)}`, /after its first wildcard/);
  });

  test("a long head before the tail is allowed: literal characters, ?, classes, escapes", () => {
    compileGlob(head("a", fit("*a", TAIL)));
    compileGlob(head("?", `**/*.{ts,tsx}`));
    compileGlob(head("[ab]", "*"));
    // Escaped or in a class, `*` and `{` are ordinary characters and start no tail.
    compileGlob(`${"\\*".repeat(400)}${"[*{]".repeat(50)}`);
    compileGlob(`src/${"a/".repeat(50)}\\{${"b".repeat(400)}/**/*.ts`);
  });

  test("real globs fit", () => {
    for (const p of [
      "src/api/**/*.{ts,tsx}",
      "**/{node_modules,dist,build,coverage}/**",
      "**/__tests__/**/*.{js,jsx,ts,tsx,mjs,cjs}",
      "apps/*/src/main/resources/META-INF/services/**",
      `node_modules/.pnpm/${"@scope+package-name@1.2.3_peer@4.5.6/node_modules/".repeat(8)}**/*.d.ts`,
    ]) {
      compileGlob(p);
    }
  });
});

describe("performance", () => {
  test("a typical check against 1,000 claims settles tens of product states per pair", () => {
    const claims = Array.from({ length: 1000 }, (_, i) =>
      compileGlob([`pkg${i % 50}/src/**`, `src/mod${i}/*.ts`, `docs/page${i}.md`, `{lib,src}/m${i}/**/index.{ts,js}`][i % 4]!),
    );
    const probes = ["src/mod7/index.ts", "src/**/*.md", "pkg3/src/api/**", "**/index.ts"].map((p) => compileGlob(p));
    let pairs = 0;
    let hits = 0;
    let steps = 0;
    let most = 0;
    const t0 = performance.now();
    for (let round = 0; round < 5; round++) {
      for (const probe of probes) {
        for (const c of claims) {
          pairs++;
          const one = stepsOf(probe, c);
          if (one.witness !== null) hits++;
          steps += one.steps;
          most = Math.max(most, one.steps);
        }
      }
    }
    const ms = performance.now() - t0;
    const t1 = performance.now();
    const fresh = Array.from({ length: 1000 }, (_, i) => compileGlob(`tree${i}/src/**/*.{ts,tsx}`));
    const compileMs = performance.now() - t1;
    console.log(
      `glob performance: ${pairs} overlap checks (${hits} overlapping) in ${ms.toFixed(1)} ms, ` +
        `${((ms * 1000) / pairs).toFixed(2)} µs per pair, ${(steps / pairs).toFixed(1)} product states per pair (at most ${most}); ` +
        `compiling 1,000 new patterns ${compileMs.toFixed(1)} ms`,
    );
    expect(fresh.length).toBe(1000);
    expect(hits).toBeGreaterThan(0);
    // limits.ts (MAX_CHECK_STEPS) counts on "a typical one tens": measured, 20 on average, 72 at most.
    expect(steps / pairs).toBeLessThan(50);
    expect(most).toBeLessThan(100);
  });
});
