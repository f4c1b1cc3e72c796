// What an open dashboard costs the calls beside it, on a daemon with a big state (docs/cluster.md,
// "Reads beside row bodies on a connection of their own"). One daemon on a fresh PostgreSQL
// database, holding FILL agents, each registered with one path claim and one lock held. Eight
// clients call increment_counter on counters of their own, back to back, for a round; in every
// other round a dashboard asks for the status snapshot (`airlock/status`, what /ui/api/status
// answers) 50 ms after each answer, as the page does while changes keep coming. Rounds alternate,
// without and with the dashboard, so both see the same moments of the machine.
// Prints, for the increments: p50, p99, max and rate without and with the dashboard, and the
// ratio of the p99s (the baseline is the rounds without); and how long a snapshot took (median).
//   bun bench/status-tail.ts [--pg URL] [--fill 1500] [--rounds 3] [--round-ms 5000]
import { parseArgs } from "node:util";
import { pgServer } from "./pg-server.ts";
import { pct } from "./stats.ts";

const USAGE = "bun bench/status-tail.ts [--pg postgres://user@host:port/db] [--fill 1500] [--rounds 3] [--round-ms 5000]";
const { values } = parseArgs({ options: { pg: { type: "string" }, fill: { type: "string" }, rounds: { type: "string" }, "round-ms": { type: "string" } } });
function whole(name: string, given: string | undefined, fallback: number, least: number): number {
  const n = Number(given ?? fallback);
  if (!Number.isInteger(n) || n < least) {
    console.error(`--${name} must be a whole number of at least ${least}, not ${JSON.stringify(given)}\nusage: ${USAGE}`);
    process.exit(2);
  }
  return n;
}
const FILL = whole("fill", values.fill, 1500, 0);
const ROUNDS = whole("rounds", values.rounds, 3, 1);
const ROUND_MS = whole("round-ms", values["round-ms"], 5000, 500);
const CLIENTS = 8;
/** The dashboard asks again this long after an answer (the page's debounce, src/ui/app.ts). */
const DEBOUNCE_MS = 50;
pgServer(values.pg, USAGE);
const { startDaemon } = await import("../test/helpers/daemon.ts");
const { freshDatabase } = await import("../test/helpers/pg.ts");
type Daemon = Awaited<ReturnType<typeof startDaemon>>;

/** A call's answer, or the bench stops: a figure over failed calls would mean nothing. */
function ok<T extends { isError?: boolean }>(r: T): T {
  if (r.isError) throw new Error(`a call failed: ${JSON.stringify(r)}`);
  return r;
}

/** FILL agents, each registered, with one path claim and one lock, 50 at a time. */
async function fill(d: Daemon): Promise<void> {
  for (let i = 0; i < FILL; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, FILL - i) }, async (_, k) => {
        const agent = `agent-${i + k}`;
        ok(await d.call("register_agent", { agent_id: agent, ttl_seconds: 3600 }));
        ok(await d.call("claim_paths", { agent_id: agent, paths: [`pkg-${i + k}/src/**`], room: "github.com/acme/big", ttl_seconds: 3600 }));
        ok(await d.call("lock_resource", { name: `held-${i + k}`, agent_id: agent, ttl_seconds: 3600 }));
      }),
    );
  }
}

/** One round: the clients' latencies (ms), and the snapshots' when a dashboard is open. */
async function round(d: Daemon, dashboard: boolean, tag: number): Promise<{ calls: number[]; snapshots: number[] }> {
  const calls: number[] = [];
  const snapshots: number[] = [];
  const end = performance.now() + ROUND_MS;
  const client = async (c: number) => {
    while (performance.now() < end) {
      const t = performance.now();
      ok(await d.call("increment_counter", { name: `tail-${tag}-${c}`, agent_id: `client-${c}` }));
      calls.push(performance.now() - t);
    }
  };
  const board = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      const r = await d.rpc("airlock/status");
      if (r.error || typeof r.result?.revision !== "number") throw new Error(`the dashboard's status failed: ${JSON.stringify(r.error)}`);
      snapshots.push(performance.now() - t);
      await Bun.sleep(DEBOUNCE_MS);
    }
  };
  await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), ...(dashboard ? [board()] : [])]);
  return { calls, snapshots };
}

const db = await freshDatabase();
const d = await startDaemon({ db: db.url });
try {
  const t = performance.now();
  await fill(d);
  console.error(`filled ${FILL} agents (a registration, a claim and a lock each) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  await round(d, true, -1); // warm-up, both paths
  const without: number[] = [];
  const within: number[] = [];
  const snapshots: number[] = [];
  let msWithout = 0;
  let msWith = 0;
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so neither always follows the other.
    for (const dashboard of r % 2 === 0 ? [false, true] : [true, false]) {
      const got = await round(d, dashboard, r);
      (dashboard ? within : without).push(...got.calls);
      snapshots.push(...got.snapshots);
      if (dashboard) msWith += ROUND_MS;
      else msWithout += ROUND_MS;
      console.error(`round ${r + 1} ${dashboard ? "with" : "without"} the dashboard: p99 ${pct(got.calls, 99).toFixed(1)} ms, ${Math.round(got.calls.length / (ROUND_MS / 1000))}/s`);
    }
  }
  const line = (name: string, xs: number[], ms: number) =>
    `| ${name} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} | ${Math.round(xs.length / (ms / 1000))} |`;
  console.log(`increment_counter, ${CLIENTS} clients, one daemon on PostgreSQL holding ${FILL} agents with a claim and a lock each; ${ROUNDS} rounds of ${ROUND_MS} ms each way`);
  console.log("| | p50 ms | p99 ms | max ms | calls/s |\n| --- | --- | --- | --- | --- |");
  console.log(line("no dashboard (baseline)", without, msWithout));
  console.log(line(`a dashboard polling 50 ms after each answer`, within, msWith));
  console.log(`p99 with the dashboard / without: ${(pct(within, 99) / pct(without, 99)).toFixed(2)}×; a snapshot took ${pct(snapshots, 50).toFixed(1)} ms (median of ${snapshots.length})`);
} finally {
  await d.kill();
  await db.drop();
}
