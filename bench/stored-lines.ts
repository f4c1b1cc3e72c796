// What a lock nobody waits for costs on a shared store when other names have lines: the lock's
// row body asks the stored lines whether anyone stands in its name's line (src/domain/lines.ts,
// standsIn). lock_resource + unlock_resource of a fresh name each time, one client, on one
// PostgreSQL-backed daemon: with no lock waiters anywhere, then with N places in other names'
// lines (N holders, each with a waiter whose wait timed out: it keeps its place, detached, for
// its grace), timed in alternating slices against the same calls on a second daemon of another
// database whose lines are empty.
//   bun bench/stored-lines.ts [--pg URL] [--waiters 300] [--pairs 600]
import { parseArgs } from "node:util";
import { pgServer } from "./pg-server.ts";
import { median } from "./stats.ts";

const { values } = parseArgs({ options: { pg: { type: "string" }, waiters: { type: "string" }, pairs: { type: "string" } } });
pgServer(values.pg, "bun bench/stored-lines.ts [--pg postgres://user@host:port/db] [--waiters 300] [--pairs 600]");
const { startDaemon } = await import("../test/helpers/daemon.ts");
const { freshDatabase } = await import("../test/helpers/pg.ts");
const WAITERS = Number(values.waiters ?? 300);
const PAIRS = Number(values.pairs ?? 600);
const SLICE = 50;

const dbs = [await freshDatabase(), await freshDatabase()];
const [crowded, empty] = await Promise.all(dbs.map((db) => startDaemon({ db: db.url })));
try {
  for (let i = 0; i < WAITERS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, WAITERS - i) }, async (_, k) => {
        const name = `held-${i + k}`;
        await crowded!.call("lock_resource", { name, agent_id: `holder-${i + k}` });
        const w = await crowded!.call("lock_resource", { name, agent_id: `waiter-${i + k}`, wait_seconds: 1 });
        if (w.locked !== false || typeof w.wake_token !== "string") throw new Error(`expected a place in line: ${JSON.stringify(w)}`);
      }),
    );
  }
  let n = 0;
  const pair = async (d: typeof crowded) => {
    const name = `free-${n++}`;
    const t = performance.now();
    const l = await d!.call("lock_resource", { name, agent_id: "bench" });
    await d!.call("unlock_resource", { name, lock_token: l.lock_token });
    return performance.now() - t;
  };
  for (let i = 0; i < 200; i++) (await pair(crowded), await pair(empty));
  const times = { crowded: [] as number[], empty: [] as number[] };
  for (let done = 0; done < PAIRS; done += SLICE) {
    for (let i = 0; i < SLICE; i++) times.crowded.push(await pair(crowded));
    for (let i = 0; i < SLICE; i++) times.empty.push(await pair(empty));
  }
  const c = median(times.crowded);
  const e = median(times.empty);
  console.log(`lock+unlock of a free name, p50 of ${PAIRS}: ${c.toFixed(3)} ms with ${WAITERS} places in other names' lines, ${e.toFixed(3)} ms with none: ${(c / e).toFixed(2)}×`);
} finally {
  await Promise.all([crowded, empty].map((d) => d?.kill()));
  for (const db of dbs) await db.drop();
}
