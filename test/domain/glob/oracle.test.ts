// The engine against an independent reference matcher (oracle.ts) on random patterns.
//
// Every pair from a pool of random patterns is checked: a witness must be a normalized path both
// patterns match by the oracle; a "disjoint" verdict must survive every path over a small alphabet
// up to a few characters and a sample of longer paths drawn from each side. The pool also holds
// literal paths (what an edit hook checks), and every pair is decided a second time with every
// search run from the start (overlapFromStart): the forced-head short cut (head.ts) must give the
// same witness and charge the same steps. The seed is printed; GLOB_SEED=<n> replays a run.
import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../../src/errors.ts";
import { type CompiledGlob, checkBudget, compileGlob, matches, normalizePattern, overlap } from "../../../src/domain/glob/index.ts";
import { overlapFromStart } from "../../../src/domain/glob/overlap.ts";
import { allPaths, randomLiteral, randomPattern, rng, samplePaths } from "./generate.ts";
import { type OraclePattern, isValidPath, oracle } from "./oracle.ts";

const SEED = process.env.GLOB_SEED ? Number(process.env.GLOB_SEED) : (Math.random() * 2 ** 32) >>> 0;
console.log(`glob oracle: seed ${SEED} (replay with GLOB_SEED=${SEED})`);

const UNIVERSE = [
  ...new Set([
    ...allPaths(["a", "b", "c", ".", "/"], 5),
    ...allPaths(["a", "b", "/"], 7),
    ...allPaths(["a", "*", ".", "/"], 4),
  ]),
];
const GLOB_CHARS = /[*?[\]{}\\]/;

interface Entry {
  source: string;
  glob: CompiledGlob;
  oracle: OraclePattern;
  /** Which UNIVERSE paths the oracle says match. */
  hits: Uint8Array;
  samples: string[];
}

/** poolSize random patterns, then `literals` random literal paths (the first part replays as before). */
function campaign(ci: boolean, poolSize: number, literals: number) {
  const r = rng(SEED + (ci ? 1 : 0));
  const failures: string[] = [];
  const fail = (msg: string) => {
    if (failures.length < 20) failures.push(msg);
  };
  const pool: Entry[] = [];
  const seen = new Set<string>();
  let refused = 0;
  while (pool.length < poolSize + literals) {
    let source: string;
    try {
      source = normalizePattern(pool.length < poolSize ? randomPattern(r, ci) : randomLiteral(r, ci));
    } catch {
      continue; // e.g. a `..` segment: refused before it is a pattern
    }
    if (seen.has(source)) continue;
    seen.add(source);
    let glob: CompiledGlob;
    try {
      glob = compileGlob(source, { caseInsensitive: ci });
    } catch (err) {
      // A few generated patterns (about 1 in 600) exceed MAX_WILDCARD_TAIL; that bound has tests
      // of its own, and this campaign is about the verdicts on the patterns that are accepted.
      if (!(err instanceof AirlockError) || !/after its first wildcard/.test(err.message)) throw err;
      refused++;
      continue;
    }
    const o = oracle(source, ci);
    const hits = new Uint8Array(UNIVERSE.length);
    UNIVERSE.forEach((p, k) => {
      hits[k] = o.test(p) ? 1 : 0;
      if (matches(glob, p) !== (hits[k] === 1)) fail(`matches(${source}, ${p}) = ${!hits[k]}, oracle says ${!!hits[k]}`);
    });
    const samples = samplePaths(r, source, 12, ci);
    for (const s of samples) if (!matches(glob, s)) fail(`matches(${source}, ${s}) = false for a sampled path`);
    pool.push({ source, glob, oracle: o, hits, samples });
  }

  let pairs = 0;
  let overlapping = 0;
  let disjoint = 0;
  let forcedGlob = 0;
  let literalVsGlob = 0;
  const started = performance.now();
  let engineMs = 0;
  for (let i = 0; i < pool.length; i++) {
    for (let j = i; j < pool.length; j++) {
      const a = pool[i]!;
      const b = pool[j]!;
      const budget = checkBudget();
      const t0 = performance.now();
      const w = overlap(a.glob, b.glob, budget);
      engineMs += performance.now() - t0;
      pairs++;
      if (a.glob.literal !== b.glob.literal) literalVsGlob++;
      const label = `${a.source}  vs  ${b.source}`;
      const plain = checkBudget();
      const w0 = overlapFromStart(a.glob, b.glob, plain);
      if (w !== w0 || budget.left !== plain.left) {
        const steps = (x: { left: number }) => checkBudget().left - x.left;
        fail(`${label}: ${JSON.stringify(w)} in ${steps(budget)} steps, but from the start ${JSON.stringify(w0)} in ${steps(plain)}`);
      }
      if (w !== null) {
        overlapping++;
        if (!isValidPath(w)) fail(`${label}: witness ${JSON.stringify(w)} is not a normalized path`);
        if (!a.oracle.test(w) || !b.oracle.test(w)) fail(`${label}: oracle rejects witness ${JSON.stringify(w)}`);
        if (GLOB_CHARS.test(w)) {
          forcedGlob++;
          const clean = UNIVERSE.findIndex((p, k) => a.hits[k] && b.hits[k] && !GLOB_CHARS.test(p));
          if (clean >= 0) fail(`${label}: witness ${JSON.stringify(w)} has glob characters but ${UNIVERSE[clean]} matches both`);
        }
        continue;
      }
      disjoint++;
      const common = UNIVERSE.findIndex((_, k) => a.hits[k] && b.hits[k]);
      if (common >= 0) fail(`${label}: called disjoint, but both match ${UNIVERSE[common]}`);
      for (const s of a.samples) if (b.oracle.test(s)) fail(`${label}: called disjoint, but both match ${s}`);
      for (const s of b.samples) if (a.oracle.test(s)) fail(`${label}: called disjoint, but both match ${s}`);
    }
  }
  const elapsed = performance.now() - started;
  console.log(
    `glob oracle (${ci ? "case-insensitive" : "case-sensitive"}): ${pool.length} patterns (${refused} generated ones refused ` +
      `by the wildcard-tail bound), ${pairs} pairs checked, ` +
      `${overlapping} overlapping (${forcedGlob} with a forced glob character), ${disjoint} disjoint, ${literalVsGlob} literal against glob; ` +
      `${UNIVERSE.length} enumerated paths; engine ${((engineMs * 1000) / pairs).toFixed(1)} µs/pair, whole check ${(elapsed / 1000).toFixed(1)} s`,
  );
  // Refusals must stay rare, or the pool would drift away from the generator's mix.
  if (refused > poolSize / 20) fail(`${refused} generated patterns refused by the wildcard-tail bound`);
  return { failures, overlapping, disjoint, literalVsGlob };
}

describe("glob overlap against the reference matcher", () => {
  test("agrees on every pair of random case-sensitive patterns", () => {
    const { failures, overlapping, disjoint, literalVsGlob } = campaign(false, 400, 120);
    expect(failures).toEqual([]);
    // The generator is tuned so both verdicts are common; if one vanished the check would be weak.
    expect(overlapping).toBeGreaterThan(1000);
    expect(disjoint).toBeGreaterThan(1000);
    expect(literalVsGlob).toBeGreaterThan(30_000);
  }, 120_000);

  test("agrees on every pair of random case-insensitive patterns", () => {
    const { failures, overlapping, disjoint, literalVsGlob } = campaign(true, 160, 50);
    expect(failures).toEqual([]);
    expect(overlapping).toBeGreaterThan(300);
    expect(disjoint).toBeGreaterThan(300);
    expect(literalVsGlob).toBeGreaterThan(5_000);
  }, 120_000);
});
