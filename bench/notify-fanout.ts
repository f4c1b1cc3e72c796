// Who hears a NOTIFY (docs/cluster.md): W busy daemons on one database, C clients each (a
// counter, then a path claim and its release, in a loop), and K idle daemons beside them, with
// nothing blocked and no watcher. What the idle daemons spend on the busy ones' writes (their
// CPU and how often they woke, per second) and what PostgreSQL spends a call, over S seconds
// after 3 s of warm-up.
//   bun bench/notify-fanout.ts postgres://...   (W, K, C, S from the environment: 3, 3, 4, 6)
import { postgresCpuMs, processCpuMs, processSwitches } from "./stats.ts";

const server = process.argv[2] ?? process.env.AIRLOCK_TEST_PG;
if (!server) throw new Error("usage: bun bench/notify-fanout.ts postgres://user@host:port/db");
const W = Number(process.env.W ?? 3), K = Number(process.env.K ?? 3), C = Number(process.env.C ?? 4), S = Number(process.env.S ?? 6);
// The helpers read the server from AIRLOCK_TEST_PG when they load.
process.env.AIRLOCK_TEST_PG = server;
const { startDaemon } = await import("../test/helpers/daemon.ts");
const { freshDatabase } = await import("../test/helpers/pg.ts");

/** Every postgres process's CPU so far, ms (those that came or went meanwhile count as they are). */
const pgCpuMs = () => [...postgresCpuMs().values()].reduce((a, b) => a + b, 0);
const db = await freshDatabase();
const busy = [] as Awaited<ReturnType<typeof startDaemon>>[];
const idle = [] as typeof busy;
let stop = false;
let calls = 0;
try {
  for (let i = 0; i < W; i++) busy.push(await startDaemon({ db: db.url }));
  for (let i = 0; i < K; i++) idle.push(await startDaemon({ db: db.url }));
  const client = async (d: (typeof busy)[number], c: string) => {
    for (let i = 0; !stop; i++) {
      await d.call("increment_counter", { name: c });
      const g = await d.call("claim_paths", { agent_id: c, room: "fanout", paths: [`${c}/${i}/**`], ttl_seconds: 60 });
      await d.call("release_paths", { claim_token: g.claim_token });
      calls += 3;
    }
  };
  const clients = busy.flatMap((d, i) => Array.from({ length: C }, (_, j) => client(d, `c${i}-${j}`)));
  await Bun.sleep(3000);
  const cpu0 = idle.map((d) => processCpuMs(d.proc.pid));
  const woke0 = idle.map((d) => processSwitches(d.proc.pid).voluntary);
  const pg0 = pgCpuMs();
  const calls0 = calls;
  const t0 = performance.now();
  await Bun.sleep(S * 1000);
  const secs = (performance.now() - t0) / 1000;
  const done = calls - calls0;
  const cpu = idle.reduce((sum, d, i) => sum + processCpuMs(d.proc.pid) - cpu0[i]!, 0) / K;
  const woke = idle.reduce((sum, d, i) => sum + processSwitches(d.proc.pid).voluntary - woke0[i]!, 0) / K;
  const pg = pgCpuMs() - pg0;
  stop = true;
  await Promise.all(clients);
  console.log(
    `${W} busy daemons (${C} clients each), ${K} idle: ${(done / secs).toFixed(0)} calls a second; each idle daemon ` +
      `${(cpu / secs / 10).toFixed(2)}% of a core and ${(woke / secs).toFixed(0)} wake-ups a second; PostgreSQL ${((pg * 1000) / done).toFixed(1)} µs a call`,
  );
} finally {
  stop = true;
  for (const d of [...busy, ...idle]) await d.kill();
  await db.drop();
}
