// Who hears a NOTIFY (docs/cluster.md): W busy daemons on one database, C clients each (a
// counter, then a path claim and its release, in a loop), and K idle daemons beside them, with
// nothing blocked and no watcher. What the idle daemons spend on the busy ones' writes (their
// CPU and how often they woke, per second) and what PostgreSQL spends a call, over S seconds
// after 3 s of warm-up.
// HANDOFF=1: the clients hand one lock to one another instead (lock_resource waiting in line,
// then unlock_resource, which grants it to the next in line, on whichever daemon that is), and
// each idle daemon holds a worker blocked on an empty queue: what other daemons' grants cost a
// daemon with a call blocked (docs/cluster.md, "Who hears a NOTIFY").
//   bun bench/notify-fanout.ts postgres://...   (W, K, C, S, HANDOFF from the environment: 3, 3, 4, 6, 0)
import { postgresCpuMs, processCpuMs, processSwitches } from "./stats.ts";

const server = process.argv[2] ?? process.env.AIRLOCK_TEST_PG;
if (!server) throw new Error("usage: bun bench/notify-fanout.ts postgres://user@host:port/db");
const W = Number(process.env.W ?? 3), K = Number(process.env.K ?? 3), C = Number(process.env.C ?? 4), S = Number(process.env.S ?? 6);
const HANDOFF = process.env.HANDOFF === "1";
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
  // Each idle daemon's blocked worker (HANDOFF): answered by nothing until the daemons stop.
  if (HANDOFF) for (const [i, d] of idle.entries()) void d.call("claim_next_task", { queue: `fanout-idle-${i}`, agent_id: `idle-${i}`, wait_seconds: S + 60 }).catch(() => null);
  const handOff = async (d: (typeof busy)[number], c: string) => {
    while (!stop) {
      const l = await d.call("lock_resource", { name: "fanout-hand", agent_id: c, ttl_seconds: 60, wait_seconds: 30 });
      if (l.locked) await d.call("unlock_resource", { name: "fanout-hand", lock_token: l.lock_token });
      calls += 2;
    }
  };
  const client = async (d: (typeof busy)[number], c: string) => {
    if (HANDOFF) return handOff(d, c);
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
    `${W} busy daemons (${C} clients each${HANDOFF ? ", handing one lock on" : ""}), ${K} idle${HANDOFF ? " with a worker blocked" : ""}: ${(done / secs).toFixed(0)} calls a second; each idle daemon ` +
      `${(cpu / secs / 10).toFixed(2)}% of a core and ${(woke / secs).toFixed(0)} wake-ups a second; PostgreSQL ${((pg * 1000) / done).toFixed(1)} µs a call`,
  );
} finally {
  stop = true;
  for (const d of [...busy, ...idle]) await d.kill();
  await db.drop();
}
