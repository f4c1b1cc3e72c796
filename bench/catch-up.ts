// What a write on one daemon costs the next call on another when the room is crowded: the
// second daemon's transaction starts with a catch-up, and its path index follows the rows the
// first one wrote (docs/cluster.md, "Catch-up by deltas"). Two daemons on one PostgreSQL
// database; a fresh agent's claim_paths + release_paths of a narrow glob, alternately on one
// daemon and the other, so every pair catches up the other's pair. In issue 17's room (1,000
// claims: 50 agents × `services/svc<a>/mod<j>/**` and `services/svc<a>/**/*.gen<j>.ts`, one
// claim each) against the same pairs on two daemons of another database whose room is empty,
// timed in alternating slices.
//   bun bench/catch-up.ts [--pg URL] [--pairs 400]
import { parseArgs } from "node:util";
import { pgServer } from "./pg-server.ts";

const { values } = parseArgs({ options: { pg: { type: "string" }, pairs: { type: "string" } } });
pgServer(values.pg, "bun bench/catch-up.ts [--pg postgres://user@host:port/db] [--pairs 400]");
const { startDaemon } = await import("../test/helpers/daemon.ts");
const { freshDatabase } = await import("../test/helpers/pg.ts");
type Daemon = Awaited<ReturnType<typeof startDaemon>>;
const PAIRS = Number(values.pairs ?? 400);
const SLICE = 20;
const ROOM = "github.com/acme/services";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const dbs = [await freshDatabase(), await freshDatabase()];
const daemons: Daemon[] = [];
try {
  for (const db of dbs) daemons.push(await startDaemon({ db: db.url }), await startDaemon({ db: db.url }));
  const [c1, c2, e1, e2] = daemons as [Daemon, Daemon, Daemon, Daemon];
  for (let a = 0; a < 50; a++) {
    const globs = Array.from({ length: 10 }, (_, j) => [`services/svc${a}/mod${j}/**`, `services/svc${a}/**/*.gen${j}.ts`]).flat();
    await Promise.all(globs.map((p) => c1.call("claim_paths", { agent_id: `agent-${a}`, paths: [p], room: ROOM, ttl_seconds: 3600 })));
  }
  let n = 0;
  const pair = async (d: Daemon) => {
    const t = performance.now();
    const g = await d.call("claim_paths", { agent_id: `fresh-${n}`, paths: [`services/common/tmp-${n++}/**`], room: ROOM });
    if (g.granted !== true) throw new Error(`expected a grant: ${JSON.stringify(g)}`);
    await d.call("release_paths", { claim_token: g.claim_token });
    return performance.now() - t;
  };
  const times = { crowded: [] as number[], empty: [] as number[] };
  for (let i = 0; i < 50; i++) await Promise.all([pair(i % 2 ? c1 : c2), pair(i % 2 ? e1 : e2)]); // warm-up
  for (let done = 0; done < PAIRS; done += SLICE) {
    for (let i = 0; i < SLICE; i++) times.crowded.push(await pair(i % 2 ? c1 : c2));
    for (let i = 0; i < SLICE; i++) times.empty.push(await pair(i % 2 ? e1 : e2));
  }
  const c = median(times.crowded);
  const e = median(times.empty);
  console.log(`claim_paths + release_paths, alternating between two daemons, p50 of ${PAIRS}: ${c.toFixed(3)} ms in a room of 1,000 claims, ${e.toFixed(3)} ms in an empty one: ${(c / e).toFixed(2)}×`);
} finally {
  await Promise.all(daemons.map((d) => d.kill()));
  for (const db of dbs) await db.drop();
}
