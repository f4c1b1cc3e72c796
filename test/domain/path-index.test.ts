// The room index (src/domain/path-index.ts) prunes by literal prefix and must never prune a true
// overlap: random rooms and random checks, the indexed answer against a brute-force scan of every
// claim with the glob engine. The seed is printed; AIRLOCK_TEST_SEED=<n> replays a run.
import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../src/errors.ts";
import { type CompiledGlob, checkBudget, compileGlob, normalizePattern, overlap } from "../../src/domain/glob/index.ts";
import { type Claim, type Entry, RoomIndex } from "../../src/domain/path-index.ts";
import { type Rng, rng } from "./glob/generate.ts";

const SEED = process.env.AIRLOCK_TEST_SEED ? Number(process.env.AIRLOCK_TEST_SEED) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
console.log(`path index: seed ${SEED} (replay with AIRLOCK_TEST_SEED=${SEED})`);

const int = (r: Rng, n: number) => Math.floor(r() * n);
const choose = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, xs.length)]!;

// Few literal names, so prefixes are shared at every depth and diverge at every depth; and every
// kind of segment that ends a literal prefix: wildcards, `**` (zero or more segments), classes,
// braces (with different literals in their branches, and a `/` inside), escapes.
const LITERALS = ["a", "b", "ab", "a.b"];
const CASED = ["A", "Ab", "B"];
const WILD = ["*", "**", "**", "a*", "*b", "?", "[ab]", "[!a]", "{a,b}", "{a,ab}", "{a/b,b}", "{,a}", "a{b,}", "\\*", "a**", "{a}"];

function randomPattern(r: Rng, ci: boolean): string {
  const n = 1 + int(r, 5);
  const segs: string[] = [];
  for (let i = 0; i < n; i++) {
    const roll = r();
    if (roll < 0.55) segs.push(choose(r, LITERALS));
    else if (ci && roll < 0.7) segs.push(choose(r, CASED));
    else segs.push(choose(r, WILD));
  }
  return segs.join("/");
}

function compiled(r: Rng, ci: boolean): CompiledGlob | undefined {
  try {
    return compileGlob(normalizePattern(randomPattern(r, ci)), { caseInsensitive: ci });
  } catch (err) {
    if (err instanceof AirlockError) return undefined; // refused by the engine (a bound): not a claim
    throw err;
  }
}

function claimOf(i: number, agent: string, globs: CompiledGlob[]): Claim {
  return { token: `t${i}`, room: "r", agentId: agent, paths: globs.map((g) => g.source), reason: null, fence: i, acquiredAt: i, expiresAt: 1e12 };
}

function campaign(ci: boolean, rounds: number) {
  const r = rng(SEED + (ci ? 1 : 0));
  const failures: string[] = [];
  let overlaps = 0;
  let visited = 0;
  let stored = 0;
  for (let round = 0; round < rounds; round++) {
    const idx = new RoomIndex(ci);
    const live = new Map<string, { claim: Claim; globs: CompiledGlob[] }>();
    const claims = 20 + int(r, 60);
    for (let i = 0; i < claims; i++) {
      const globs = Array.from({ length: 1 + int(r, 3) }, () => compiled(r, ci)).filter((g): g is CompiledGlob => g !== undefined);
      if (globs.length === 0) continue;
      const unique = [...new Map(globs.map((g) => [g.source, g])).values()];
      const claim = claimOf(i, `agent-${int(r, 5)}`, unique);
      idx.add(claim, unique);
      live.set(claim.token, { claim, globs: unique });
      // Some claims go again, so removal (and the trie nodes it prunes) is exercised too.
      if (r() < 0.25) {
        const gone = choose(r, [...live.keys()]);
        idx.remove(gone);
        live.delete(gone);
      }
    }
    for (let q = 0; q < 40; q++) {
      const a = compiled(r, ci);
      if (!a) continue;
      const candidates = new Set<Entry>();
      idx.visit(a, (e) => candidates.add(e));
      visited += candidates.size;
      const seen = new Set([...candidates].map((e) => `${e.claim.token} ${e.glob.source}`));
      for (const { claim, globs } of live.values()) {
        for (const g of globs) {
          stored++;
          const witness = overlap(a, g, checkBudget());
          if (witness === null) continue;
          overlaps++;
          if (!seen.has(`${claim.token} ${g.source}`)) failures.push(`${a.source} overlaps ${g.source} (at ${witness}) but the index pruned it`);
        }
      }
      // conflicts(): exactly the brute-force pairs of other agents' claims, oldest claim first.
      const agent = `agent-${int(r, 5)}`;
      const want = [...live.values()]
        .filter(({ claim }) => claim.agentId !== agent)
        .flatMap(({ claim, globs }) => globs.filter((g) => overlap(a, g, checkBudget()) !== null).map((g) => `${claim.agentId} ${g.source}`));
      const got = idx.conflicts([a], agent, 0, checkBudget()).map((c) => `${c.heldBy} ${c.heldPath}`);
      if (JSON.stringify(got) !== JSON.stringify(want)) failures.push(`conflicts of ${a.source}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
    }
    for (const token of live.keys()) idx.remove(token);
    const left: Entry[] = [];
    idx.visit(compileGlob("**", { caseInsensitive: ci }), (e) => left.push(e));
    if (left.length > 0 || idx.claims.size > 0) failures.push(`an emptied index still holds ${left.length} patterns`);
  }
  return { failures, overlaps, visited, stored };
}

describe("the room index against a brute-force scan", () => {
  for (const ci of [false, true]) {
    test(`never prunes an overlapping claim, and reports the same conflicts${ci ? " (case-insensitive room)" : ""}`, () => {
      const { failures, overlaps, visited, stored } = campaign(ci, 40);
      expect(failures.slice(0, 10)).toEqual([]);
      // Both verdicts were common, and the index did prune: it is not a scan in disguise.
      expect(overlaps).toBeGreaterThan(500);
      expect(visited).toBeLessThan(stored * 0.8);
      // 3.5-4.5 s on this 2-core machine when busy: past bun's 5 s default on a loaded one.
    }, 60_000);
  }
});

describe("what a check visits", () => {
  // The room: 50 agents x (services/svc<a>/mod<j>/** and services/svc<a>/**/*.gen<j>.ts).
  const idx = new RoomIndex(false);
  let n = 0;
  for (let a = 0; a < 50; a++) {
    for (let j = 0; j < 10; j++) {
      for (const p of [`services/svc${a}/mod${j}/**`, `services/svc${a}/**/*.gen${j}.ts`]) {
        const g = compileGlob(p);
        idx.add(claimOf(n++, `agent-${a}`, [g]), [g]);
      }
    }
  }
  const visits = (p: string, ci = false) => {
    const out: string[] = [];
    idx.visit(compileGlob(p, { caseInsensitive: ci }), (e) => out.push(e.glob.source));
    return out.sort();
  };

  test("a path beside every claim visits none; one inside a service visits that service's claims on its way", () => {
    expect(visits("services/common/lib/util.ts")).toEqual([]);
    const inside = visits("services/svc7/mod3/index.ts");
    expect(inside).toEqual([...Array.from({ length: 10 }, (_, j) => `services/svc7/**/*.gen${j}.ts`), "services/svc7/mod3/**"].sort());
  });

  test("a pattern whose prefix ends higher visits the whole subtree below it", () => {
    expect(visits("services/svc7/**")).toHaveLength(20);
    expect(visits("services/*/mod3/**")).toHaveLength(1000);
    expect(visits("**/x.ts")).toHaveLength(1000);
  });

  test("a check compiled with another case rule than the room's is refused, not silently pruned", () => {
    expect(() => visits("services/svc7/x", true)).toThrow(/another case rule/);
  });
});
