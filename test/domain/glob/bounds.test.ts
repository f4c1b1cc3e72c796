// Hostile patterns: the bounds refuse what is too big, and whatever is accepted compiles and is
// compared quickly. Timings are printed, not asserted, except a generous bound that only an
// exponential blow-up would break.
import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../../src/errors.ts";
import {
  MAX_ALTERNATIVES,
  MAX_AUTOMATON_STATES,
  MAX_BRACE_DEPTH,
  MAX_PATTERN_LENGTH,
  MAX_SEGMENTS,
  compileGlob,
  overlap,
} from "../../../src/domain/glob/index.ts";
import { automatonOf } from "../../../src/domain/glob/compile.ts";

const SANITY_MS = 2000; // far above the worst measured case (~0.2 s); only a blow-up gets near it

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

/** The worst patterns we could build within the bounds. */
const HOSTILE: Record<string, string> = {
  "**/ x63": `${"**/".repeat(MAX_SEGMENTS - 1)}x`,
  "*a x512": "*a".repeat(MAX_PATTERN_LENGTH / 2),
  "*? x512": "*?".repeat(MAX_PATTERN_LENGTH / 2),
  "*. x512": "*.".repeat(MAX_PATTERN_LENGTH / 2),
  "[!a]* x204": "[!a]*".repeat(204),
  "{**,a}/ x63": "{**,a}/".repeat(63).slice(0, 440),
  "{*/,**/,a*} x23": "{*/,**/,a*}".repeat(23),
  "braces at full depth x16": nested(MAX_BRACE_DEPTH).repeat(16),
  [`${MAX_ALTERNATIVES} alternatives`]: alternatives(MAX_ALTERNATIVES),
  "{,} x128": "{,}".repeat(128) + "a",
  "long literal": "abcdefghijklmno/".repeat(64).slice(0, MAX_PATTERN_LENGTH - 1),
};

describe("hostile patterns", () => {
  test("compile and compare in bounded time, pairwise", () => {
    const globs = Object.entries(HOSTILE).map(([name, p]) => {
      const t0 = performance.now();
      const g = compileGlob(p);
      const ms = performance.now() - t0;
      expect(ms).toBeLessThan(SANITY_MS);
      return { name, g, ms };
    });
    const lines = globs.map(({ name, g, ms }) => `  ${name}: ${automatonOf(g).size} states, compiled in ${ms.toFixed(1)} ms`);
    let worst = { ms: 0, pair: "" };
    for (const a of globs) {
      for (const b of globs) {
        const t0 = performance.now();
        overlap(a.g, b.g);
        const ms = performance.now() - t0;
        expect(ms).toBeLessThan(SANITY_MS);
        if (ms > worst.ms) worst = { ms, pair: `${a.name} vs ${b.name}` };
      }
    }
    console.log(`hostile patterns:\n${lines.join("\n")}\n  slowest overlap: ${worst.pair}, ${worst.ms.toFixed(1)} ms`);
  }, 60_000);

  test("**/ repeated to the segment bound still matches at any depth", () => {
    const g = compileGlob(HOSTILE["**/ x63"]!);
    expect(overlap(g, compileGlob("x"))).toBe("x");
    expect(overlap(g, compileGlob("a/b/c/x"))).toBe("a/b/c/x");
    expect(overlap(g, compileGlob("a/*/c/y"))).toBeNull();
  });

  test("*a*a*a... against *b*b*b... is decided without backtracking blow-up", () => {
    const a = compileGlob(HOSTILE["*a x512"]!);
    expect(overlap(a, compileGlob("*b".repeat(512)))).toBeNull();
    expect(overlap(a, compileGlob("a".repeat(512)))).toBe("a".repeat(512));
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
    refusedWith(nested(MAX_BRACE_DEPTH + 1), /nests braces too deeply: at most 8 levels/);
  });

  test("more than MAX_ALTERNATIVES brace alternatives in total are refused", () => {
    compileGlob(alternatives(MAX_ALTERNATIVES));
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

describe("performance", () => {
  test("a typical check against 1,000 claims takes microseconds per pair", () => {
    const claims = Array.from({ length: 1000 }, (_, i) =>
      compileGlob([`pkg${i % 50}/src/**`, `src/mod${i}/*.ts`, `docs/page${i}.md`, `{lib,src}/m${i}/**/index.{ts,js}`][i % 4]!),
    );
    const probes = ["src/mod7/index.ts", "src/**/*.md", "pkg3/src/api/**", "**/index.ts"].map((p) => compileGlob(p));
    let pairs = 0;
    let hits = 0;
    const t0 = performance.now();
    for (let round = 0; round < 5; round++) {
      for (const probe of probes) {
        for (const c of claims) {
          pairs++;
          if (overlap(probe, c) !== null) hits++;
        }
      }
    }
    const ms = performance.now() - t0;
    const t1 = performance.now();
    const fresh = Array.from({ length: 1000 }, (_, i) => compileGlob(`tree${i}/src/**/*.{ts,tsx}`));
    const compileMs = performance.now() - t1;
    console.log(
      `glob performance: ${pairs} overlap checks (${hits} overlapping) in ${ms.toFixed(1)} ms, ` +
        `${((ms * 1000) / pairs).toFixed(2)} µs per pair; compiling 1,000 new patterns ${compileMs.toFixed(1)} ms`,
    );
    expect(fresh.length).toBe(1000);
    expect(hits).toBeGreaterThan(0);
  });
});
