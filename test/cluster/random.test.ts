// A randomized run across three daemons on one PostgreSQL database (issue 21): twelve
// simulated agents, four on each daemon's side but sending a part of their calls to the
// others, take and release locks (some waiting up to 2 s, some two at once), slots of one small pool (queueing,
// claiming offers, withdrawing), path claims over overlapping globs, and counter values, and
// read what every daemon shows; a watch_changes reader on each daemon follows the journal.
// What must hold, checked as the answers arrive and again at the end (test/helpers/random-
// model.ts says why each check is sound from the client's side alone):
// - one holder per lock; fences strictly increasing per lock, per pool and per room;
// - held + offered ≤ capacity for the pool, in every list_pools and in the agents' own grants;
// - path claims of different agents never overlap, in the grants and in every list_path_claims;
// - a lock, slot or claim held throughout a read shows in that read, whatever daemon it asks;
// - every increment gets a distinct value, and the values are 1..N;
// - the journal: every reader sees revisions strictly increasing, a full re-read at the end
//   shows no change a reader had moved past without seeing, and every daemon reads the same.
// Only documented semantics are asserted, never a latency: the run must hold whatever the
// PostgreSQL driver's transactions look like (one global order, or per-resource locks).
// It runs a second time with the third daemon over a slow link (bench/link.ts), where its row
// batches' flights overlap (docs/cluster.md, "Flights that overlap").
// The seed is random, printed first, and AIRLOCK_TEST_SEED replays it: it fixes each agent's
// choices; the interleaving is the machine's. Every failure names the seed and the operation
// (`#global-index agent.step daemon tool`). Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { errorMessage } from "../../src/errors.ts";
import type { DaemonProcess, StartOptions } from "../helpers/daemon.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnLink } from "../../bench/link.ts";
import { type Cluster, doubleGrants, journalValues, seeded, startCluster, traceLabels } from "../helpers/cluster.ts";
import { describePg, PG_URL } from "../helpers/pg.ts";
import { type Change, checkClaims, checkJournalFences, checkLocks, checkPool, type Grant, heldThroughout, Book, Reader, Violations } from "../helpers/random-model.ts";
import { PATTERNS } from "../helpers/random-paths.ts";
import { type Prng, prng } from "../reliability/support.ts";

setDefaultTimeout(180_000);

const DAEMONS = 3;
const AGENTS = 12;
// Sized so a run takes 18–30 s on two cores shared with other work (docs/testing.md).
const OPS_PER_AGENT = 80;
const LOCKS = ["res-0", "res-1", "res-2", "res-3", "res-4"]; // few names for twelve agents: most grants contend
const POOL = "rand-pool";
const CAPACITY = 3; // with weights 1 and 2, a few holders fill it
const OFFER_S = 1; // the shortest: an absent agent's offer pauses soon, and the line moves on
const ROOM = "rand-room";
const COUNTERS = ["cnt-a", "cnt-b"];
// Far beyond the run: nothing lapses while held. Should a run on a crawling machine outlive
// it, a grant counts as held only up to its TTL (from its request, less LAPSE_SLACK_MS: the
// daemon's clock is the database's) and a refused release after that is no violation.
const TTL_S = 120;
const LAPSE_SLACK_MS = 1000;
/** A call not answered in this long is lost (a liveness bound; the longest wait asked is 2 s). */
const CALL_BOUND_MS = 30_000;
/** The kinds each daemon's reader watches (undefined: every kind). */
const READER_KINDS: (string[] | undefined)[] = [undefined, ["lock.", "counter."], ["pool.", "path."]];
/** The link's delay each way, for the run with one daemon over it: a round trip well above the 1 ms from which flights overlap. */
const LINK_MS = 2;

interface Agent {
  id: string;
  home: number;
  rng: Prng;
  step: number;
  locks: Map<string, { token: string; g: Grant }>;
  /** Wake tokens of the places kept in lock lines after a refusal (by name, or a group's names). */
  lockWake: Map<string, string>;
  slot: { token: string; g: Grant } | { wake: string; weight: number } | null;
  claim: { token: string; g: Grant } | null;
}

type Answer = { r: any; sent: number; ack: number };

class Run {
  readonly v: Violations;
  readonly book: Book;
  readonly values = new Map<string, { value: number; op: string }[]>(COUNTERS.map((c) => [c, []]));
  private ops = 0;

  constructor(
    readonly seed: number,
    readonly daemons: readonly DaemonProcess[],
  ) {
    this.v = new Violations(seed);
    this.book = new Book(this.v, CAPACITY);
  }

  /** The first violation ends the run early: its message is what matters. */
  get stopped(): boolean {
    return this.v.list.length > 0;
  }

  /** How many of each outcome, for the closing line. */
  readonly tally: Record<string, number> = {};

  count(what: string): void {
    this.tally[what] = (this.tally[what] ?? 0) + 1;
  }

  /** An operation's name in messages: the global index, who (agent.step), the daemon, the call. */
  label(who: Agent | string, d: number, what: string): string {
    return `#${++this.ops} ${typeof who === "string" ? who : `${who.id}.${who.step}`} d${d + 1} ${what}`;
  }

  /** A tool call that must be answered, and without an error: anything else is a violation (null). */
  async call(op: string, d: number, tool: string, args: Record<string, unknown>): Promise<Answer | null> {
    const sent = performance.now();
    try {
      const r = await this.daemons[d]!.call(tool, args, { signal: AbortSignal.timeout(CALL_BOUND_MS) });
      const ack = performance.now();
      if (r?.isError) {
        this.v.add(op, `${tool} ${JSON.stringify(args)} answered an error: ${JSON.stringify(r).slice(0, 300)}`);
        return null;
      }
      return { r, sent, ack };
    } catch (err) {
      this.v.add(op, `${tool} ${JSON.stringify(args)} failed: ${errorMessage(err).slice(0, 300)}`);
      return null;
    }
  }
}

const pickWait = (rng: Prng) => (rng.chance(0.5) ? 0 : rng.chance(0.7) ? 1 : 2);
/** Mostly the agent's own daemon; the rest to any of them, so grants and releases cross over. */
const pickDaemon = (a: Agent) => (a.rng.chance(0.6) ? a.home : a.rng.int(0, DAEMONS - 1));

function grantOf(kind: Grant["kind"], key: string, a: Agent, x: Answer, op: string, weight = 1, paths: readonly string[] = []): Grant {
  return { kind, key, agent: a.id, fence: x.r.fence, asked: x.sent, from: x.ack, to: Number.POSITIVE_INFINITY, lapse: x.sent + TTL_S * 1000 - LAPSE_SLACK_MS, weight, paths, op };
}

/** A release that must say released:true while the grant is within its TTL. */
async function release(run: Run, g: Grant, op: string, d: number, tool: string, args: Record<string, unknown>): Promise<void> {
  g.to = Math.min(g.to, performance.now());
  const x = await run.call(op, d, tool, args);
  if (!x) return;
  if (x.r.released === true) g.released = x.ack;
  else if (x.sent < g.lapse) run.v.add(op, `${tool} of ${g.kind} ${g.key} (fence ${g.fence}, from op ${g.op}) answered ${JSON.stringify(x.r)}: the grant was lost while held`);
}

async function lock(run: Run, a: Agent): Promise<void> {
  const name = a.rng.pick(LOCKS.filter((n) => !a.locks.has(n)));
  const wait = pickWait(a.rng);
  const d = pickDaemon(a);
  const wake = a.lockWake.get(name);
  const op = run.label(a, d, `lock_resource ${name} wait ${wait}`);
  const x = await run.call(op, d, "lock_resource", { name, agent_id: a.id, ttl_seconds: TTL_S, wait_seconds: wait, ...(wake ? { wake_token: wake } : {}) });
  if (!x) return;
  if (x.r.locked) {
    a.lockWake.delete(name);
    const g = grantOf("lock", name, a, x, op);
    run.book.granted(g);
    run.count("locks granted");
    a.locks.set(name, { token: x.r.lock_token, g });
  } else {
    run.count(x.r.deadlock ? "deadlock answers" : "locks refused");
    if (x.r.wake_token) a.lockWake.set(name, x.r.wake_token);
    else a.lockWake.delete(name); // a deadlock answer: the place was withdrawn
    if (x.r.held_by === a.id) run.v.add(op, `refused, held by ${a.id} itself, which holds no grant of ${name}`);
  }
}

/** Two names at once (lock_resources: all or nothing, waiting in line on both). */
async function lockGroup(run: Run, a: Agent): Promise<void> {
  const first = a.rng.pick(LOCKS);
  const names = [first, a.rng.pick(LOCKS.filter((n) => n !== first))].sort();
  const key = names.join(" ");
  const wait = pickWait(a.rng);
  const d = pickDaemon(a);
  const wake = a.lockWake.get(key);
  const op = run.label(a, d, `lock_resources ${key} wait ${wait}`);
  const x = await run.call(op, d, "lock_resources", { names, agent_id: a.id, ttl_seconds: TTL_S, wait_seconds: wait, ...(wake ? { wake_token: wake } : {}) });
  if (!x) return;
  if (!x.r.locked) {
    run.count(x.r.deadlock ? "deadlock answers" : "groups refused");
    if (x.r.wake_token) a.lockWake.set(key, x.r.wake_token);
    else a.lockWake.delete(key);
    return;
  }
  a.lockWake.delete(key);
  run.count("groups granted");
  if (JSON.stringify(Object.keys(x.r.tokens).sort()) !== JSON.stringify(names)) run.v.add(op, `granted ${JSON.stringify(x.r.tokens)} for ${key}`);
  for (const name of names) {
    if (typeof x.r.fences?.[name] !== "number") run.v.add(op, `no fence for ${name}: ${JSON.stringify(x.r)}`);
    const g = grantOf("lock", name, a, { ...x, r: { fence: x.r.fences?.[name] } }, op);
    run.book.granted(g);
    a.locks.set(name, { token: x.r.tokens[name], g });
  }
}

async function unlock(run: Run, a: Agent, name = a.rng.pick([...a.locks.keys()])): Promise<void> {
  const held = a.locks.get(name)!;
  a.locks.delete(name);
  const d = pickDaemon(a);
  await release(run, held.g, run.label(a, d, `unlock_resource ${name}`), d, "unlock_resource", { name, lock_token: held.token });
}

async function pool(run: Run, a: Agent): Promise<void> {
  const d = pickDaemon(a);
  const s = a.slot;
  if (s && "token" in s) {
    a.slot = null;
    return release(run, s.g, run.label(a, d, "release_slot"), d, "release_slot", { slot_token: s.token });
  }
  if (s && a.rng.chance(0.3)) {
    // Withdraw the queued request (its answer is not judged: an offer may have lapsed meanwhile).
    a.slot = null;
    await run.call(run.label(a, d, "release_slot (withdraw)"), d, "release_slot", { slot_token: s.wake });
    return;
  }
  const weight = s ? s.weight : a.rng.chance(0.25) ? 2 : 1;
  const wait = pickWait(a.rng);
  const op = run.label(a, d, `acquire_slot weight ${weight} wait ${wait}${s ? " (resumed)" : ""}`);
  const x = await run.call(op, d, "acquire_slot", { agent_id: a.id, pool: POOL, wait_seconds: wait, ...(s ? { wake_token: s.wake } : { weight, ttl_seconds: TTL_S }) });
  if (!x) return;
  if (x.r.granted) {
    if (x.r.weight !== weight) run.v.add(op, `granted weight ${x.r.weight}, asked ${weight}`);
    const g = grantOf("slot", POOL, a, x, op, weight);
    run.book.granted(g);
    run.count("slots granted");
    a.slot = { token: x.r.slot_token, g };
  } else {
    run.count(x.r.deadlock ? "deadlock answers" : "slots queued");
    if (x.r.in_use > x.r.capacity) run.v.add(op, `refused with in_use ${x.r.in_use} > capacity ${x.r.capacity}`);
    a.slot = x.r.wake_token ? { wake: x.r.wake_token, weight } : null;
  }
}

async function paths(run: Run, a: Agent): Promise<void> {
  const d = pickDaemon(a);
  if (a.claim) {
    const held = a.claim;
    a.claim = null;
    return release(run, held.g, run.label(a, d, "release_paths"), d, "release_paths", { claim_token: held.token });
  }
  const first = a.rng.pick(PATTERNS);
  const want = a.rng.chance(0.3) ? [...new Set([first, a.rng.pick(PATTERNS)])] : [first];
  const wait = pickWait(a.rng);
  const op = run.label(a, d, `claim_paths ${want.join(" ")} wait ${wait}`);
  const x = await run.call(op, d, "claim_paths", { agent_id: a.id, paths: want, room: ROOM, ttl_seconds: TTL_S, wait_seconds: wait });
  if (!x) return;
  if (x.r.granted) {
    if (JSON.stringify(x.r.paths) !== JSON.stringify(want)) run.v.add(op, `granted ${JSON.stringify(x.r.paths)}, asked ${JSON.stringify(want)}`);
    const g = grantOf("claim", ROOM, a, x, op, 1, want);
    run.book.granted(g);
    run.count("claims granted");
    a.claim = { token: x.r.claim_token, g };
  } else {
    run.count(x.r.deadlock ? "deadlock answers" : "claims refused");
    for (const c of x.r.conflicts ?? []) if (c.held_by === a.id) run.v.add(op, `refused by its own claim ${c.held_path}`);
  }
}

async function increment(run: Run, a: Agent): Promise<void> {
  const name = a.rng.pick(COUNTERS);
  const d = pickDaemon(a);
  const op = run.label(a, d, `increment_counter ${name}`);
  const x = await run.call(op, d, "increment_counter", { name });
  if (!x) return;
  const got = run.values.get(name)!;
  const same = got.find((e) => e.value === x.r.value);
  if (same) run.v.add(op, `${name}: value ${x.r.value} given twice (first at op ${same.op})`);
  got.push({ value: x.r.value, op });
  run.count("increments");
}

/** A read on a random daemon, checked against the grants held throughout it. */
async function observe(run: Run, a: Agent): Promise<void> {
  const d = a.rng.int(0, DAEMONS - 1);
  const what = a.rng.pick(["list_locks", "list_pools", "list_path_claims", "check_paths"] as const);
  if (what === "check_paths") {
    // Another agent's claim, held now: asked about its paths, every daemon names it.
    const theirs = run.book.all("claim").filter((g) => g.agent !== a.id && g.to === Number.POSITIVE_INFINITY);
    if (theirs.length === 0) return;
    const g = a.rng.pick(theirs);
    const op = run.label(a, d, `check_paths ${g.paths.join(" ")}`);
    run.count("reads checked");
    const x = await run.call(op, d, "check_paths", { paths: [...g.paths], room: ROOM, agent_id: a.id });
    if (x && heldThroughout(g, x.sent, x.ack)) run.count("grants seen held in reads");
    if (x && heldThroughout(g, x.sent, x.ack) && (x.r.clear !== false || !x.r.conflicts?.some((c: { held_by: string }) => c.held_by === g.agent))) {
      run.v.add(op, `check_paths does not name ${g.agent}, which held ${JSON.stringify(g.paths)} throughout (fence ${g.fence}, from op ${g.op}): ${JSON.stringify(x.r).slice(0, 300)}`);
    }
    return;
  }
  const op = run.label(a, d, what);
  run.count("reads checked");
  const x = await run.call(op, d, what, what === "list_path_claims" ? { room: ROOM } : {});
  if (!x) return;
  const checked =
    what === "list_locks"
      ? checkLocks(run.v, op, run.book, x.r, x.sent, x.ack)
      : what === "list_pools"
        ? checkPool(run.v, op, run.book, x.r, POOL, x.sent, x.ack)
        : checkClaims(run.v, op, run.book, ROOM, x.r, x.sent, x.ack);
  run.tally["grants seen held in reads"] = (run.tally["grants seen held in reads"] ?? 0) + checked;
}

async function agentLoop(run: Run, a: Agent): Promise<void> {
  for (a.step = 1; a.step <= OPS_PER_AGENT && !run.stopped; a.step++) {
    const ops: [number, () => Promise<void>][] = [
      [a.locks.size < 2 ? 3 : 0, () => lock(run, a)],
      [a.locks.size === 0 ? 1 : 0, () => lockGroup(run, a)],
      [a.locks.size * 2, () => unlock(run, a)],
      [3, () => pool(run, a)],
      [3, () => paths(run, a)],
      [2, () => increment(run, a)],
      [2, () => observe(run, a)],
    ];
    let r = a.rng.next() * ops.reduce((n, [w]) => n + w, 0);
    const chosen = ops.find(([w]) => (r -= w) < 0) ?? ops[ops.length - 1]!;
    await chosen[1]();
    await Bun.sleep(a.rng.int(0, 4));
  }
  // Leave nothing behind: the end checks expect every lock, slot, request and claim gone.
  a.step++;
  for (const name of [...a.locks.keys()]) await unlock(run, a, name);
  const s = a.slot;
  a.slot = null;
  const d = a.home;
  if (s && "token" in s) await release(run, s.g, run.label(a, d, "release_slot"), d, "release_slot", { slot_token: s.token });
  else if (s) await run.call(run.label(a, d, "release_slot (withdraw)"), d, "release_slot", { slot_token: s.wake });
  if (a.claim) await paths(run, a);
}

/** A daemon's watch_changes reader, from revision 0 until the agents are done and it has read everything. */
async function readerLoop(run: Run, reader: Reader, d: number, rng: Prng, agentsDone: () => boolean): Promise<void> {
  for (let n = 1; !run.stopped; n++) {
    const done = agentsDone();
    const wait = done ? 0 : pickWait(rng);
    const op = run.label(`${reader.name}.${n}`, d, `watch_changes since ${reader.since} wait ${wait}`);
    const x = await run.call(op, d, "watch_changes", { since_revision: reader.since, wait_seconds: wait, limit: rng.int(5, 200), ...(reader.kinds ? { kinds: reader.kinds } : {}) });
    if (!x) return;
    run.count("journal pages read");
    reader.take(run.v, op, x.r);
    if (done && x.r.changes.length === 0) return;
  }
}

/** The whole journal (of some kinds) as d reads it now, page by page. */
async function readAll(run: Run, d: number, kinds: string[] | undefined): Promise<Change[]> {
  const out: Change[] = [];
  for (let since = 0; ; ) {
    const x = await run.call(run.label("end", d, `watch_changes since ${since}`), d, "watch_changes", { since_revision: since, limit: 1000, ...(kinds ? { kinds } : {}) });
    if (!x || x.r.changes.length === 0) return out;
    out.push(...x.r.changes);
    since = x.r.revision;
  }
}

/** After the run: nothing left held, the counters' values, the journal read in full on every daemon. */
async function endChecks(run: Run, readers: readonly Reader[]): Promise<number> {
  const { v, book } = run;
  const holds = book.all("lock").map((g) => ({ name: g.key, agent: g.agent, fence: g.fence, from: g.from, to: Math.min(g.to, g.lapse), asked: g.asked, released: g.released }));
  for (const problem of doubleGrants(holds)) v.add("end", problem);

  for (let d = 0; d < DAEMONS; d++) {
    const locks = await run.call(run.label("end", d, "list_locks"), d, "list_locks", {});
    for (const l of (locks?.r ?? []) as { name: string; agent_id?: string }[]) if (LOCKS.includes(l.name) && l.agent_id) v.add(`end d${d + 1}`, `lock ${l.name} still held by ${l.agent_id}`);
    const pools = await run.call(run.label("end", d, "list_pools"), d, "list_pools", {});
    const p = (pools?.r ?? []).find((x: { pool: string }) => x.pool === POOL);
    if (!p || p.in_use !== 0 || p.offered !== 0 || p.waiters.length !== 0) v.add(`end d${d + 1}`, `pool ${POOL} not empty after every release and withdrawal: ${JSON.stringify(p)}`);
    const claims = await run.call(run.label("end", d, "list_path_claims"), d, "list_path_claims", { room: ROOM });
    if (claims && claims.r.length !== 0) v.add(`end d${d + 1}`, `claims left in ${ROOM}: ${JSON.stringify(claims.r)}`);
  }

  // Every increment was answered, so the values are exactly 1..N; one more gives N+1, and the
  // journal of every daemon records each value once.
  for (const [name, got] of run.values) {
    const values = got.map((e) => e.value).sort((a, b) => a - b);
    const expected = Array.from({ length: values.length }, (_, i) => i + 1);
    if (JSON.stringify(values) !== JSON.stringify(expected)) v.add("end", `${name}: the ${values.length} values answered are not 1..${values.length}: ${JSON.stringify(values.slice(0, 40))}`);
    const last = await run.call(run.label("end", 0, `increment_counter ${name}`), 0, "increment_counter", { name });
    if (last && last.r.value !== values.length + 1) v.add("end", `${name}: ${values.length} increments, then the next one gave ${last.r.value}`);
    for (let d = 0; d < DAEMONS; d++) {
      const recorded = (await journalValues(run.daemons[d]!, name)).sort((a, b) => a - b);
      if (JSON.stringify(recorded) !== JSON.stringify([...expected, values.length + 1])) v.add(`end d${d + 1}`, `${name}: the journal records ${JSON.stringify(recorded.slice(0, 40))} (${recorded.length} values), not 1..${values.length + 1}`);
    }
  }

  // One journal: every daemon reads the same changes, in strictly increasing revisions.
  // (Up to the lowest last revision of the three reads, in case something lapsed in between.)
  const reads = await Promise.all(Array.from({ length: DAEMONS }, (_, d) => readAll(run, d, undefined)));
  const upTo = Math.min(...reads.map((j) => j.at(-1)?.revision ?? 0));
  const full = reads.map((j) => j.filter((c) => c.revision <= upTo));
  const keys = full.map((j) => j.map((c) => `${c.revision} ${c.kind} ${c.resource} ${c.agent_id ?? "-"}`).join("\n"));
  for (let d = 1; d < DAEMONS; d++) if (keys[d] !== keys[0]) v.add(`end d${d + 1}`, `reads a journal of ${full[d]!.length} changes unlike d1's ${full[0]!.length}`);
  for (let i = 1; i < full[0]!.length; i++) {
    if (full[0]![i]!.revision <= full[0]![i - 1]!.revision) v.add("end d1", `journal revision ${full[0]![i]!.revision} after ${full[0]![i - 1]!.revision}`);
  }
  checkJournalFences(v, full[0]!, book.all(), "lock.granted", "lock");
  checkJournalFences(v, full[0]!, book.all(), "path.granted", "claim");
  // Each reader's view against a full re-read of its kinds, on every daemon.
  for (const reader of readers) {
    for (let d = 0; d < DAEMONS; d++) reader.compare(v, `end d${d + 1} ${reader.name}`, await readAll(run, d, reader.kinds));
  }
  return full[0]!.length;
}

if (!PG_URL) console.warn("random.test.ts: skipped: set AIRLOCK_TEST_PG to a PostgreSQL server's URL (`bash .ci/pg.sh start DIR` prints one)");

/**
 * The run on three daemons of a fresh database (`reach`: how each reaches it, startCluster);
 * its violations, after it printed its seed and tally.
 */
async function randomRun(
  what: string,
  o: { reach?: (i: number, url: string) => Omit<StartOptions, "home">; before?: (c: Cluster) => Promise<void>; after?: (c: Cluster) => Promise<void> } = {},
): Promise<void> {
  const rng = seeded(what);
  console.error(`random.test seed=${rng.seed}`);
  const c: Cluster = await startCluster(DAEMONS, {}, o.reach);
  try {
    await o.before?.(c);
    const run = new Run(rng.seed, c.daemons);
    const cfg = await run.call("setup", 0, "configure_pool", { pool: POOL, capacity: CAPACITY, expected_version: 0, author: "random.test", reason: "a small pool", offer_seconds: OFFER_S });
    expect(cfg?.r).toMatchObject({ configured: true });
    const agents: Agent[] = Array.from({ length: AGENTS }, (_, i) => ({
      id: `a${i}`,
      home: i % DAEMONS,
      rng: prng(rng.seed + 1 + i),
      step: 0,
      locks: new Map(),
      lockWake: new Map(),
      slot: null,
      claim: null,
    }));
    const readers = READER_KINDS.map((kinds, d) => new Reader(`reader-d${d + 1}`, kinds));
    let agentsDone = false;
    const started = performance.now();
    const reading = readers.map((r, d) => readerLoop(run, r, d, prng(rng.seed + 100 + d), () => agentsDone));
    await Promise.all(agents.map((a) => agentLoop(run, a)));
    agentsDone = true;
    await Promise.all(reading);
    const ranS = (performance.now() - started) / 1000;
    const changes = await endChecks(run, readers);
    console.log(
      `random run (seed ${rng.seed}): ${ranS.toFixed(1)} s, ${Object.entries(run.tally).map(([k, n]) => `${k} ${n}`).join(", ")}, ` +
        `journal ${changes} changes, violations ${run.v.list.length}`,
    );
    if (run.v.list.length) console.error(`random.test: replay with AIRLOCK_TEST_SEED=${rng.seed}`);
    expect({ violations: run.v.list.length, first: run.v.list.slice(0, 12) }).toEqual({ violations: 0, first: [] });
    await o.after?.(c);
  } finally {
    await c.stop();
  }
}

describePg("three daemons on one PostgreSQL database, a seeded random run", () => {
  test(`${AGENTS} agents × ${OPS_PER_AGENT} operations (locks, a pool, path claims, counters, reads) and a journal reader per daemon keep every invariant`, async () => {
    await randomRun("random cross-daemon run");
  });

  test("the same with the third daemon over a slow link, its row batches' flights overlapping (docs/cluster.md, \"Flights that overlap\")", async () => {
    const server = new URL(PG_URL!);
    const link = await spawnLink({ host: server.hostname, port: Number(server.port || 5432) }, LINK_MS);
    const trace = join(mkdtempSync(join(tmpdir(), "airlock-trace-")), "far.trace");
    const from = Date.now();
    try {
      await randomRun("random cross-daemon run over a link", {
        reach: (i, url) => (i === DAEMONS - 1 ? { db: link.via(url), env: { AIRLOCK_TRACE: trace } } : { db: url }),
        // Flights overlap once enough were measured slow (flights.ts): measured before the run.
        before: async (c) => {
          for (let i = 0; i < 40; i++) await c.daemons[DAEMONS - 1]!.call("increment_counter", { name: "warm-up" });
        },
        // Stopped gently, so it writes its trace.
        after: async (c) => void (await c.daemons[DAEMONS - 1]!.kill()),
      });
    } finally {
      link.close();
    }
    // Flights did overlap on the daemon over the link.
    const overlapped = traceLabels(trace, from, Date.now()).filter((l) => l === "flight overlaps").length;
    console.log(`random run over a link: ${overlapped} flights of the far daemon overlapped`);
    expect(overlapped).toBeGreaterThan(0);
  });
});
