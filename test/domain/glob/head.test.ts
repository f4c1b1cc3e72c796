// The forced-head short cut (src/domain/glob/head.ts) against the plain search from the start:
// same witness, same steps charged, on hand-picked pairs where the head ends in every way it can
// (inside the other side's wildcards, at a literal's end with more to search below it, at a `.`
// opening a segment, at a character a restricted re-search may not pick). The oracle test
// compares the two on every random pair as well.
import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../../src/errors.ts";
import { type CheckBudget, checkBudget, compileGlob } from "../../../src/domain/glob/index.ts";
import { automatonOf } from "../../../src/domain/glob/compile.ts";
import { overlap, overlapFromStart } from "../../../src/domain/glob/overlap.ts";
import { randomLiteral, randomPattern, rng, samplePaths } from "./generate.ts";

function both(a: string, b: string, ci = false) {
  const ga = compileGlob(a, { caseInsensitive: ci });
  const gb = compileGlob(b, { caseInsensitive: ci });
  const run = (f: typeof overlap, x = ga, y = gb) => {
    const budget = checkBudget();
    return { witness: f(x, y, budget), steps: checkBudget().left - budget.left };
  };
  return { head: run(overlap), start: run(overlapFromStart), swapped: run(overlap, gb, ga), swappedStart: run(overlapFromStart, gb, ga) };
}

describe("overlap after a forced head", () => {
  // The witnesses are the engine's before the short cut (pinned, so a change shows here too).
  test("gives the search's own witness and charge where a literal meets globs", () => {
    const cases: Array<[string, string, string | null]> = [
      // issue 17's room: a literal path overlaps agent-7's claims inside it and (as a directory) below it
      ["services/svc7/mod3/index.ts", "services/svc7/mod3/**", "services/svc7/mod3/index.ts"],
      ["services/svc7/mod3/index.ts", "services/svc7/**/*.gen0.ts", "services/svc7/mod3/index.ts/a.gen0.ts"],
      ["services/svc7/mod3/index.ts", "services/svc7/mod4/**", null],
      ["services/svc7/mod3/index.ts", "services/svc7/mod3/index.ts", "services/svc7/mod3/index.ts"],
      ["src/a.ts", "src/*.ts", "src/a.ts"],
      ["src/a.ts", "src/*.md", null],
      ["src/a.ts", "src/**/*.md", "src/a.ts/a.md"],
      ["src/a.ts", "src/*/x", "src/a.ts/x"],
      ["src/a.ts", "src/?", null],
      ["src", "src/**", "src"],
      ["src/.env", "src/*", "src/.env"],
      ["src/.git", "**/.git/**", "src/.git"],
      ["a/.b", "a/[!.]*", null],
      ["a/b", "a/b/.*", "a/b/.a"],
      ["lib\\*", "lib[*]", "lib*"],
      ["lib\\*", "lib[*]/*", "lib*/a"],
      ["x}/y,", "x}/*", "x}/y,"],
      ["a/b", "a/b/**/.x", "a/b/.x"],
      ["a.", "a.*", "a."],
    ];
    for (const [a, b, expected] of cases) {
      const r = both(a, b);
      expect(r.head.witness).toBe(expected);
      expect(r.head).toEqual(r.start);
      expect(r.swapped).toEqual(r.swappedStart);
      expect(r.swapped.witness).toBe(expected);
    }
  });

  test("agrees where both sides have literal heads, and in a case-insensitive room", () => {
    for (const [a, b, ci] of [
      ["services/svc7/**", "services/svc7/mod3/**", false],
      ["src/api/**/*.ts", "src/api/v1/{a,b}.ts", false],
      ["src/A.ts", "src/a*", true],
      ["SRC/Api/**", "src/api/X.ts", true],
      ["src/K.ts", "src/[!k]*", true],
    ] as const) {
      const r = both(a, b, ci);
      expect(r.head).toEqual(r.start);
      expect(r.swapped).toEqual(r.swappedStart);
    }
  });

  test("runs out of a budget exactly where the search from the start does", () => {
    const a = compileGlob("services/svc7/mod3/index.ts");
    const b = compileGlob("services/svc7/**/*.gen0.ts");
    const full = checkBudget();
    overlapFromStart(a, b, full);
    const steps = checkBudget().left - full.left;
    expect(steps).toBeGreaterThan(30); // most of them along the literal
    const outcome = (f: typeof overlap, left: number) => {
      const budget: CheckBudget = { left };
      try {
        return f(a, b, budget);
      } catch (err) {
        if (err instanceof AirlockError && /too costly/.test(err.message)) return "refused";
        throw err;
      }
    };
    for (const left of [0, 1, 10, steps - 20, steps - 1, steps, steps + 1]) {
      expect(outcome(overlap, left)).toBe(outcome(overlapFromStart, left));
    }
    expect(outcome(overlap, steps - 1)).toBe("refused");
    expect(outcome(overlap, steps)).toBe("services/svc7/mod3/index.ts/a.gen0.ts");
  });

  test("remembers what lies below a literal per claim, for every literal that leaves it alike, and charges it again", () => {
    const gen = compileGlob("services/svc7/**/*.gen0.ts");
    const paths = ["services/svc7/mod3/index.ts", "services/svc7/lib/util.ts", "services/svc7/a", "services/svc7/mod3/index.ts"];
    for (const p of paths) {
      const l = compileGlob(p);
      expect(automatonOf(l).literalEnd).toBeGreaterThan(0);
      const r = both(p, gen.source);
      expect(r.head).toEqual(r.start);
      expect(r.head.witness).toBe(`${p}/a.gen0.ts`);
      // A remembered answer is refused on the same budget as the search it stands for.
      const short: CheckBudget = { left: r.start.steps - 1 };
      expect(() => overlap(l, gen, short)).toThrow(/too costly/);
      expect(overlap(l, gen, { left: r.start.steps })).toBe(`${p}/a.gen0.ts`);
    }
    // A glob has no literal end, and its implied tail is only a literal's.
    expect(automatonOf(gen).literalEnd).toBe(-1);
    expect(automatonOf(compileGlob("src/a.ts", { caseInsensitive: true })).literalEnd).toBe(8);
  });

  test("agrees on seeded literal paths taken from what random patterns match", () => {
    const seed = process.env.GLOB_SEED ? Number(process.env.GLOB_SEED) : (Math.random() * 2 ** 32) >>> 0;
    console.log(`glob head: seed ${seed} (replay with GLOB_SEED=${seed})`);
    const failures: string[] = [];
    let pairs = 0;
    let overlapping = 0;
    for (const ci of [false, true]) {
      const r = rng(seed + (ci ? 7 : 3));
      const globs: string[] = [];
      const literals: string[] = [];
      while (globs.length < 120) {
        const p = randomPattern(r, ci);
        try {
          compileGlob(p, { caseInsensitive: ci });
        } catch {
          continue;
        }
        globs.push(p);
        // Paths the pattern matches, written as literal patterns, overlap it by construction.
        for (const s of samplePaths(r, p, 3, ci)) literals.push(s.replace(/[*?[\]{}\\]/g, "\\$&"));
        literals.push(randomLiteral(r, ci));
      }
      for (const l of literals) {
        let gl;
        try {
          gl = compileGlob(l, { caseInsensitive: ci });
        } catch {
          continue;
        }
        for (const g of globs) {
          const gg = compileGlob(g, { caseInsensitive: ci });
          for (const [x, y] of [[gl, gg], [gg, gl]] as const) {
            const b1 = checkBudget();
            const b2 = checkBudget();
            const w1 = overlap(x, y, b1);
            const w2 = overlapFromStart(x, y, b2);
            pairs++;
            if (w1 !== null) overlapping++;
            if ((w1 !== w2 || b1.left !== b2.left) && failures.length < 20) {
              failures.push(`${x.source} vs ${y.source}: ${JSON.stringify(w1)} (${b1.left} left), from the start ${JSON.stringify(w2)} (${b2.left} left)`);
            }
          }
        }
      }
    }
    console.log(`glob head: ${pairs} literal/glob pairs, ${overlapping} overlapping`);
    expect(failures).toEqual([]);
    expect(overlapping).toBeGreaterThan(pairs / 20);
  }, 60_000);
});
