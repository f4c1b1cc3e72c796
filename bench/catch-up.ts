// What a write on one daemon costs the next call on another when memory mirrors a crowded table:
// the second daemon's transaction starts with a catch-up that follows the rows the first one
// wrote (docs/cluster.md, "Catch-up by deltas"). Two daemons on one PostgreSQL database; a pair
// of calls, alternately on one daemon and the other, so every pair catches up the other's pair,
// against the same pairs on two daemons of another database whose table is empty, timed in
// alternating slices.
// - paths (default): a fresh agent's claim_paths + release_paths of a narrow glob, in issue 17's
//   room (1,000 claims: 50 agents × `services/svc<a>/mod<j>/**` and
//   `services/svc<a>/**/*.gen<j>.ts`, one claim each): the path index.
// - lines: an agent whose wait for a held lock timed out polls its place with its wake_token
//   (wait_seconds 0: the place is kept, its grace restarted, and it is now the polling daemon's,
//   so its row is written again), with 300 places in other names' lines (each a holder and a
//   waiter whose wait timed out) against none: the waiter lines.
// - timers: a lock group of one fresh name taken (a line body, which writes `locks`) and
//   released, with 300 other locks held against none: the locks' expiry timers.
//   bun bench/catch-up.ts [--what paths|lines|timers] [--pg URL] [--pairs 400]
import { parseArgs } from "node:util";
import { pgServer } from "./pg-server.ts";
import { median } from "./stats.ts";

const USAGE = "bun bench/catch-up.ts [--what paths|lines|timers] [--pg postgres://user@host:port/db] [--pairs 400]";
const { values } = parseArgs({ options: { what: { type: "string" }, pg: { type: "string" }, pairs: { type: "string" } } });
const WHAT = values.what ?? "paths";
if (WHAT !== "paths" && WHAT !== "lines" && WHAT !== "timers") {
  console.error(`--what must be paths, lines or timers, not ${JSON.stringify(WHAT)}\nusage: ${USAGE}`);
  process.exit(2);
}
pgServer(values.pg, USAGE);
const { startDaemon } = await import("../test/helpers/daemon.ts");
const { freshDatabase } = await import("../test/helpers/pg.ts");
type Daemon = Awaited<ReturnType<typeof startDaemon>>;
const PAIRS = Number(values.pairs ?? 400);
const SLICE = 20;
const ROOM = "github.com/acme/services";
const WAITERS = 300;

/** What every database holds before the pairs (lines: the polled place and its wake_token). */
async function prepare(d: Daemon): Promise<string> {
  if (WHAT !== "lines") return "";
  await d.call("lock_resource", { name: "polled", agent_id: "holder", ttl_seconds: 3600 });
  const w = await d.call("lock_resource", { name: "polled", agent_id: "poller", wait_seconds: 1 });
  if (w.locked !== false || typeof w.wake_token !== "string") throw new Error(`expected a place in line: ${JSON.stringify(w)}`);
  return w.wake_token;
}

/** Fills the crowded database through one of its daemons. */
async function crowd(d: Daemon): Promise<void> {
  if (WHAT === "paths") {
    for (let a = 0; a < 50; a++) {
      const globs = Array.from({ length: 10 }, (_, j) => [`services/svc${a}/mod${j}/**`, `services/svc${a}/**/*.gen${j}.ts`]).flat();
      await Promise.all(globs.map((p) => d.call("claim_paths", { agent_id: `agent-${a}`, paths: [p], room: ROOM, ttl_seconds: 3600 })));
    }
    return;
  }
  for (let i = 0; i < WAITERS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, WAITERS - i) }, async (_, k) => {
        const name = `held-${i + k}`;
        await d.call("lock_resource", { name, agent_id: `holder-${i + k}`, ttl_seconds: 3600 });
        if (WHAT === "timers") return;
        const w = await d.call("lock_resource", { name, agent_id: `waiter-${i + k}`, wait_seconds: 1 });
        if (w.locked !== false || typeof w.wake_token !== "string") throw new Error(`expected a place in line: ${JSON.stringify(w)}`);
      }),
    );
  }
}

let n = 0;
/** Each daemon's database's polled place (lines). */
const tokens = new Map<Daemon, string>();
async function pair(d: Daemon): Promise<number> {
  const i = n++;
  const t = performance.now();
  if (WHAT === "paths") {
    const g = await d.call("claim_paths", { agent_id: `fresh-${i}`, paths: [`services/common/tmp-${i}/**`], room: ROOM });
    if (g.granted !== true) throw new Error(`expected a grant: ${JSON.stringify(g)}`);
    await d.call("release_paths", { claim_token: g.claim_token });
  } else if (WHAT === "timers") {
    const g = await d.call("lock_resources", { names: [`group-${i}`], agent_id: `g-${i}` });
    if (g.locked !== true) throw new Error(`expected the group: ${JSON.stringify(g)}`);
    await d.call("unlock_resource", { name: `group-${i}`, lock_token: g.tokens[`group-${i}`] });
  } else {
    const w = await d.call("lock_resource", { name: "polled", agent_id: "poller", wake_token: tokens.get(d), wait_seconds: 0 });
    if (w.locked !== false || w.queue_position !== 1) throw new Error(`expected the place kept: ${JSON.stringify(w)}`);
  }
  return performance.now() - t;
}

const dbs = [await freshDatabase(), await freshDatabase()];
const daemons: Daemon[] = [];
try {
  for (const db of dbs) daemons.push(await startDaemon({ db: db.url }), await startDaemon({ db: db.url }));
  const [c1, c2, e1, e2] = daemons as [Daemon, Daemon, Daemon, Daemon];
  const [ct, et] = [await prepare(c1), await prepare(e1)];
  for (const [d, t] of [[c1, ct], [c2, ct], [e1, et], [e2, et]] as const) tokens.set(d, t);
  await crowd(c1);
  const times = { crowded: [] as number[], empty: [] as number[] };
  for (let i = 0; i < 50; i++) await Promise.all([pair(i % 2 ? c1 : c2), pair(i % 2 ? e1 : e2)]); // warm-up
  for (let done = 0; done < PAIRS; done += SLICE) {
    for (let i = 0; i < SLICE; i++) times.crowded.push(await pair(i % 2 ? c1 : c2));
    for (let i = 0; i < SLICE; i++) times.empty.push(await pair(i % 2 ? e1 : e2));
  }
  const c = median(times.crowded);
  const e = median(times.empty);
  const what = { paths: "claim_paths + release_paths", lines: "a place in line polled with its wake_token", timers: "lock_resources of one name + unlock_resource" }[WHAT];
  const crowded = { paths: "a room of 1,000 claims", lines: `${WAITERS} places in other names' lines`, timers: `${WAITERS} other locks held` }[WHAT];
  console.log(`${what}, alternating between two daemons, p50 of ${PAIRS}: ${c.toFixed(3)} ms with ${crowded}, ${e.toFixed(3)} ms with none: ${(c / e).toFixed(2)}×`);
} finally {
  await Promise.all(daemons.map((d) => d.kill()));
  for (const db of dbs) await db.drop();
}
