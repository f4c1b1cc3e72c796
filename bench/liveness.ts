// What a daemon coming or going costs the others on a shared store (docs/cluster.md, "A daemon
// coming or going"): a CI runner that starts and stops, a laptop that sleeps. Two databases, a
// daemon on each: one crowded (issue 17's room of 1,000 claims, 300 locks held, 300 agents
// registered), one empty. In both, a third daemon's heartbeat row comes and goes every 1.2 s
// (each daemon's own heartbeat, once a second, sees it), CYCLES times; after each change, one
// call on each daemon (list_locks: a transaction in the global order, so whatever catch-up the
// change left for the next transaction runs too). Measured: each daemon's CPU time over the
// cycles (/proc, utime + stime), per change, crowded against empty, and the same cycles with no
// third daemon at all (what the calls and heartbeats cost alone).
//   bun bench/liveness.ts [--pg URL] [--cycles 10]
import { parseArgs } from "node:util";
import { pgServer } from "./pg-server.ts";
import { processCpuMs } from "./stats.ts";

const USAGE = "bun bench/liveness.ts [--pg postgres://user@host:port/db] [--cycles 10]";
const { values } = parseArgs({ options: { pg: { type: "string" }, cycles: { type: "string" } } });
const CYCLES = Number(values.cycles ?? 10);
if (!Number.isInteger(CYCLES) || CYCLES < 1) {
  console.error(`--cycles must be a whole number of at least 1, not ${JSON.stringify(values.cycles)}\nusage: ${USAGE}`);
  process.exit(2);
}
pgServer(values.pg, USAGE);
const { startDaemon } = await import("../test/helpers/daemon.ts");
const { freshDatabase, withClient } = await import("../test/helpers/pg.ts");
type Daemon = Awaited<ReturnType<typeof startDaemon>>;
const ROOM = "github.com/acme/services";
const STEP_MS = 1200;

async function crowd(d: Daemon): Promise<void> {
  for (let a = 0; a < 50; a++) {
    const globs = Array.from({ length: 10 }, (_, j) => [`services/svc${a}/mod${j}/**`, `services/svc${a}/**/*.gen${j}.ts`]).flat();
    await Promise.all(globs.map((p) => d.call("claim_paths", { agent_id: `agent-${a}`, paths: [p], room: ROOM, ttl_seconds: 3600 })));
  }
  for (let i = 0; i < 300; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, async (_, k) => {
        await d.call("lock_resource", { name: `held-${i + k}`, agent_id: `holder-${i + k}`, ttl_seconds: 3600 });
        await d.call("register_agent", { agent_id: `present-${i + k}`, ttl_seconds: 3600 });
      }),
    );
  }
}

const dbs = [await freshDatabase(), await freshDatabase()];
const daemons: Daemon[] = [];
try {
  for (const db of dbs) daemons.push(await startDaemon({ db: db.url }));
  const [crowded, empty] = daemons as [Daemon, Daemon];
  await crowd(crowded);
  const ghost = (sql: string) => Promise.all(dbs.map((db) => withClient(db.url, (c) => c.unsafe(sql))));
  /** CYCLES cycles of two steps each, with the third daemon coming and going (or not): each daemon's CPU ms per step. */
  const run = async (churn: boolean) => {
    const before = daemons.map((d) => processCpuMs(d.proc.pid));
    for (let i = 0; i < CYCLES; i++) {
      for (const sql of [
        "INSERT INTO daemons (id, host, pid, started_at, seen_at) VALUES ('bench-ghost', 'elsewhere', 1, 0, (extract(epoch from clock_timestamp()) * 1000)::bigint + 60000)",
        "DELETE FROM daemons WHERE id = 'bench-ghost'",
      ]) {
        if (churn) await ghost(sql);
        await Bun.sleep(STEP_MS);
        await Promise.all(daemons.map((d) => d.call("list_locks")));
      }
    }
    return daemons.map((d, k) => (processCpuMs(d.proc.pid) - before[k]!) / (2 * CYCLES));
  };
  await run(false); // warm-up
  const quiet = await run(false);
  const churned = await run(true);
  const [cq, eq] = quiet as [number, number];
  const [cc, ec] = churned as [number, number];
  console.log(`daemon CPU per 1.2 s step, ${CYCLES} cycles: no daemon coming or going ${cq.toFixed(1)} ms crowded, ${eq.toFixed(1)} ms empty`);
  console.log(`a daemon coming or going at each step: ${cc.toFixed(1)} ms crowded, ${ec.toFixed(1)} ms empty`);
  console.log(`what each change costs a daemon (over the quiet steps): ${(cc - cq).toFixed(1)} ms with a room of 1,000 claims, 300 locks and 300 agents, ${(ec - eq).toFixed(1)} ms with none`);
} finally {
  await Promise.all(daemons.map((d) => d.kill()));
  for (const db of dbs) await db.drop();
}
