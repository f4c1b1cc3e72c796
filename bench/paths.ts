// Path claims in crowded rooms (bench/run.ts's path figures, alone with `--only paths`): 1,000
// live claims in a room, one claim per glob, against the same calls in an empty room, timed
// alternately so both see the same moment of the machine.
//
// Two room shapes:
//  - "packages": 50 agents × 20 globs, each agent in its own top directory: narrow subtrees of its
//    package, its docs and tests, a brace pattern, and one wildcard-first pattern (no literal
//    first segment, so no index can rule it out: every check runs the overlap product on it).
//    `**/fixtures-<a>/*` would overlap every other agent's `pkg-<b>/src/mod-<i>/**` (at
//    `pkg-b/src/mod-0/fixtures-a/x`), so the wildcard-first ones are `*/fixtures-<a>/*`.
//  - "services" (issue 17): 50 agents × (`services/svc<a>/mod<j>/**` and
//    `services/svc<a>/**/*.gen<j>.ts`, j < 10): every claim shares the leading directory, so an
//    index by first segment alone puts all 1,000 in one bucket.
import type { DaemonProcess } from "../test/helpers/daemon.ts";
import { paired } from "./pairing.ts";

type Add = (r: { mode: string; metric: string; value: number; unit: string; baseline?: string; baselineValue?: number }) => void;
type Figure = [what: string, crowded: () => Promise<unknown>, empty: () => Promise<unknown>];

const CLAIMS = 1000;

export async function pathFigures(d: DaemonProcess, mode: string, add: Add, quick: boolean): Promise<void> {
  await packagesRoom(d, mode, add, quick);
  await servicesRoom(d, mode, add, quick);
}

async function packagesRoom(d: DaemonProcess, mode: string, add: Add, quick: boolean) {
  const room = "bench:paths:crowd";
  const empty = "bench:paths:empty";
  const tokens = await fill(d, room, (a) => [
    ...Array.from({ length: 16 }, (_, i) => `pkg-${a}/src/mod-${i}/**`),
    `pkg-${a}/docs/*.md`,
    `pkg-${a}/test/**/*.test.ts`,
    `pkg-${a}/{package,tsconfig}.json`,
    `*/fixtures-${a}/*`,
  ]);
  // A fresh agent's narrow, non-conflicting claim, released at once.
  const claim = async (r: string) => {
    const g = await d.call("claim_paths", { agent_id: "fresh", paths: ["pkg-7/src/mod-99/**"], room: r });
    if (!g.granted) throw new Error("bench: the fresh claim was denied");
    await d.call("release_paths", { claim_token: g.claim_token });
  };
  const free = "pkg-7/src/mod-99/index.ts"; // overlaps nothing (shares pkg-7 with 19 claims of agent-7)
  const taken = "pkg-7/src/mod-3/index.ts"; // inside agent-7's pkg-7/src/mod-3/**
  await measure(mode, add, quick, "", [
    ["claim_paths+release_paths, narrow glob", () => claim(room), () => claim(empty)],
    ["check_paths, a path that overlaps nothing", check(d, room, free, true), check(d, empty, free, true)],
    ["check_paths, a path that conflicts", check(d, room, taken, false), check(d, empty, taken, true)],
  ]);
  await release(d, tokens);
}

async function servicesRoom(d: DaemonProcess, mode: string, add: Add, quick: boolean) {
  const room = "bench:paths:services";
  const empty = "bench:paths:empty";
  const globsOf = (a: number) => [
    ...Array.from({ length: 10 }, (_, j) => `services/svc${a}/mod${j}/**`),
    ...Array.from({ length: 10 }, (_, j) => `services/svc${a}/**/*.gen${j}.ts`),
  ];
  const tokens = await fill(d, room, globsOf);
  // agent-7's 20 claims alone: a conflicting check's answer (11 conflicts, each with its witness
  // search) costs the same there, so this baseline shows what the other 980 claims add.
  const few = "bench:paths:services-one-agent";
  tokens.push(...(await fill(d, few, (a) => (a === 7 ? globsOf(a) : []), 20)));
  // A literal path may be a directory, so any path inside an agent's service overlaps its ten
  // `**/*.gen<j>.ts` claims (`services/svc7/lib/util.ts/a.gen0.ts`): the free path is beside them.
  const free = "services/common/lib/util.ts";
  const taken = "services/svc7/mod3/index.ts"; // agent-7's mod3/** and (as a directory) its ten gen globs
  await measure(mode, add, quick, ", services/svc<a>/…", [
    ["check_paths, a path that overlaps nothing", check(d, room, free, true), check(d, empty, free, true)],
    ["check_paths, a path that conflicts", check(d, room, taken, false), check(d, empty, taken, true)],
  ]);
  const [alone, crowded] = await paired(quick ? 200 : 1000, check(d, few, taken, false), check(d, room, taken, false));
  add({ mode, metric: `check_paths, a path that conflicts, services/svc<a>/…, agent-7's 20 claims alone (p50)`, value: alone, unit: "ms" });
  add({ mode, metric: `check_paths, a path that conflicts, services/svc<a>/…, ${CLAIMS} claims in the room (p50)`, value: crowded, unit: "ms", baseline: "same, agent-7's 20 claims alone", baselineValue: alone });
  await release(d, tokens);
}

/** Claims each agent's globs, one claim per glob, and checks the room holds `expect` of them. */
async function fill(d: DaemonProcess, room: string, globsOf: (agent: number) => string[], expect = CLAIMS): Promise<string[]> {
  const tokens: string[] = [];
  for (let a = 0; a < 50; a++) {
    for (const p of globsOf(a)) {
      const r = await d.call("claim_paths", { agent_id: `agent-${a}`, paths: [p], room, ttl_seconds: 3600 });
      if (!r.granted) throw new Error(`bench setup: ${p} denied: ${JSON.stringify(r.conflicts?.[0])}`);
      tokens.push(r.claim_token);
    }
  }
  const held = (await d.call("list_path_claims", { room })).length;
  if (held !== expect) throw new Error(`bench setup: expected ${expect} claims in ${room}, got ${held}`);
  return tokens;
}

async function release(d: DaemonProcess, tokens: readonly string[]) {
  for (const t of tokens) await d.call("release_paths", { claim_token: t });
}

function check(d: DaemonProcess, room: string, path: string, clear: boolean) {
  return async () => {
    const r = await d.call("check_paths", { paths: [path], room, agent_id: "fresh" });
    if (r.clear !== clear) throw new Error(`bench: check_paths ${path} in ${room}: clear=${r.clear}`);
  };
}

async function measure(mode: string, add: Add, quick: boolean, shape: string, figures: Figure[]) {
  const reps = quick ? 200 : 1000;
  for (const [what, crowded, empty] of figures) {
    for (let i = 0; i < 50; i++) await crowded();
    for (let i = 0; i < 50; i++) await empty();
    const [inEmpty, inCrowd] = await paired(reps, empty, crowded);
    add({ mode, metric: `${what}${shape}, empty room (p50)`, value: inEmpty, unit: "ms" });
    add({ mode, metric: `${what}${shape}, ${CLAIMS} claims in the room (p50)`, value: inCrowd, unit: "ms", baseline: "same, empty room", baselineValue: inEmpty });
  }
}
