// The floors a PostgreSQL-backed Airlock (issue 11) will be measured against, and the evidence
// for its driver: Bun's built-in SQL client, against a real server.
//   bun bench/pg-probe.ts postgres://user@127.0.0.1:5432/db   (or AIRLOCK_STORE)
// It measures, as medians over many rounds:
// - one round trip (SELECT 1), and one write transaction (BEGIN; UPDATE; COMMIT), the floor of a
//   single-daemon write call;
// - NOTIFY delivery: from a NOTIFY committed on one connection to the LISTEN callback on
//   another, the floor of a cross-daemon hand-off;
// - SELECT ... FOR UPDATE SKIP LOCKED and pg_try_advisory_xact_lock, the two ways an expiry can
//   fire on exactly one daemon;
// and checks that a LISTEN survives the server closing its connection (re-subscribed by the
// driver), which a daemon needs across a PostgreSQL restart.
import { SQL } from "bun";
import { median } from "./stats.ts";

const url = process.argv[2] ?? process.env.AIRLOCK_STORE;
if (!url) {
  console.error("usage: bun bench/pg-probe.ts postgres://user@host:port/db");
  process.exit(2);
}
const ROUNDS = Number(process.env.ROUNDS ?? 500);

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

async function time(rounds: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(50, rounds); i++) await fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

const sql = new SQL(url, { max: 4 });
const listener = new SQL(url, { max: 1 });
await sql`CREATE TABLE IF NOT EXISTS airlock_probe (id int PRIMARY KEY, n bigint NOT NULL)`;
await sql`INSERT INTO airlock_probe VALUES (1, 0) ON CONFLICT (id) DO NOTHING`;

const rtt = await time(ROUNDS, () => sql`SELECT 1`);
const write = await time(ROUNDS, () =>
  sql.begin(async (tx) => {
    await tx`UPDATE airlock_probe SET n = n + 1 WHERE id = 1`;
  }),
);
const skipLocked = await time(ROUNDS, () =>
  sql.begin(async (tx) => {
    await tx`SELECT id FROM airlock_probe WHERE id = 1 FOR UPDATE SKIP LOCKED`;
  }),
);
const advisory = await time(ROUNDS, () =>
  sql.begin(async (tx) => {
    await tx`SELECT pg_try_advisory_xact_lock(27183)`;
  }),
);

// NOTIFY delivery: each round notifies and waits for its own payload on the other connection.
let deliver: ((payload: string) => void) | undefined;
const sub = await listener.listen("airlock_probe", (payload) => deliver?.(payload));
const notify = await time(Math.min(ROUNDS, 300), async () => {
  const got = new Promise<void>((resolve) => (deliver = () => resolve()));
  await sql`SELECT pg_notify('airlock_probe', 'x')`;
  await got;
});

// The server drops the listener's connection (as a restart or failover would): is the LISTEN
// back, without our code doing anything?
const [{ pid }] = await listener`SELECT pg_backend_pid() AS pid`;
await sql`SELECT pg_terminate_backend(${pid})`;
let survived = false;
for (let i = 0; i < 50 && !survived; i++) {
  const got = new Promise<boolean>((resolve) => {
    deliver = () => resolve(true);
    setTimeout(() => resolve(false), 100);
  });
  await sql`SELECT pg_notify('airlock_probe', 'after')`.catch(() => undefined);
  survived = await got;
}

console.log(`PostgreSQL ${(await sql`SHOW server_version`)[0].server_version}, ${ROUNDS} rounds, medians (p99):`);
console.log(`  round trip (SELECT 1)              ${us(median(rtt))} (${us(p99(rtt))})`);
console.log(`  write transaction (BEGIN/UPDATE/COMMIT) ${us(median(write))} (${us(p99(write))})`);
console.log(`  FOR UPDATE SKIP LOCKED transaction ${us(median(skipLocked))} (${us(p99(skipLocked))})`);
console.log(`  pg_try_advisory_xact_lock transaction ${us(median(advisory))} (${us(p99(advisory))})`);
console.log(`  NOTIFY → LISTEN callback            ${us(median(notify))} (${us(p99(notify))})`);
console.log(`  LISTEN re-subscribed after its connection was killed: ${survived ? "yes" : "NO"}`);

await sub.unlisten().catch(() => undefined);
await sql`DROP TABLE airlock_probe`;
await sql.close();
await listener.close();
