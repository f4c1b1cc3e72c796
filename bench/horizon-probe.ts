// Is a reader's snapshot xmin a sound horizon for row versions stamped with the writers' own
// transaction ids? (docs/cluster.md, "Designed, not built: line bodies that overlap", step 2.)
// `bun bench/horizon-probe.ts postgres://...` creates a scratch table, runs the three orders
// that matter on three connections, prints what each read saw, and drops the table. Exits 1
// if a row written by a transaction the horizon passed is not read from that horizon.
import { SQL } from "bun";

const url = process.argv[2];
if (!url) throw new Error("usage: bun bench/horizon-probe.ts postgres://...");
const admin = new SQL(url);
const T = "airlock_horizon_probe";
await admin.unsafe(`DROP TABLE IF EXISTS ${T}; CREATE TABLE ${T} (k text PRIMARY KEY, wxid xid8 NOT NULL DEFAULT pg_current_xact_id())`);
const writerA = await new SQL({ url, max: 1 }).reserve();
const writerB = new SQL({ url, max: 1 });
const reader = new SQL({ url, max: 1 });
let wrong = 0;

/** One delta read: the rows stamped at or above `since`, and the next `since`, in one statement (one snapshot). */
async function read(since: string): Promise<{ keys: string[]; horizon: string }> {
  const [r] = await reader.unsafe(
    `SELECT (SELECT coalesce(json_agg(k ORDER BY k), '[]') FROM ${T} WHERE wxid >= $1::xid8) AS keys, pg_snapshot_xmin(pg_current_snapshot())::text AS horizon`,
    [since],
  );
  return { keys: r.keys, horizon: r.horizon };
}
function expect(what: string, seen: { keys: string[] }, key: string): void {
  const ok = seen.keys.includes(key);
  if (!ok) wrong++;
  console.log(`${what}: ${JSON.stringify(seen)} ${ok ? "has" : "MISSES"} ${key}`);
}

// 1. A writes first (the older id) and stays open; B writes and commits; a read sees B only.
await writerA.unsafe("BEGIN");
await writerA.unsafe(`INSERT INTO ${T} (k) VALUES ('a1')`);
await writerB.unsafe(`INSERT INTO ${T} (k) VALUES ('b1')`);
const r1 = await read("0");
expect("1. A open with an id, B committed", r1, "b1");
await writerA.unsafe("COMMIT");
expect(`1. after A's commit, from ${r1.horizon}`, await read(r1.horizon), "a1");

// 2. A open without an id; B writes and commits; a read; then A writes and commits.
const base = (await read("0")).horizon;
await writerA.unsafe("BEGIN");
await writerA.unsafe("SELECT 1");
await writerB.unsafe(`INSERT INTO ${T} (k) VALUES ('b2')`);
const r2 = await read(base);
await writerA.unsafe(`INSERT INTO ${T} (k) VALUES ('a2')`);
await writerA.unsafe("COMMIT");
expect(`2. A took its id after the read, from ${r2.horizon}`, await read(r2.horizon), "a2");

// 3. A savepoint's row carries the top-level id (the xmin system column has the subtransaction's).
await writerA.unsafe("BEGIN");
await writerA.unsafe("SAVEPOINT s");
await writerA.unsafe(`INSERT INTO ${T} (k) VALUES ('s1')`);
const [sp] = await writerA.unsafe(`SELECT wxid::text AS stamp, xmin::text AS sys, pg_current_xact_id()::text AS top FROM ${T} WHERE k = 's1'`);
await writerA.unsafe("RELEASE SAVEPOINT s");
await writerA.unsafe("COMMIT");
if (sp.stamp !== sp.top) wrong++;
console.log(`3. in a savepoint: stamp ${sp.stamp}, top-level id ${sp.top}, xmin column ${sp.sys}`);

writerA.release();
await admin.unsafe(`DROP TABLE ${T}`);
console.log(wrong === 0 ? "the horizon held in every case" : `${wrong} case(s) broke the horizon`);
process.exit(wrong === 0 ? 0 : 1);
