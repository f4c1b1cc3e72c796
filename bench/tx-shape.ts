// Issue 11, step 1: what writing the domain as generators (run by a synchronous driver for SQLite,
// an async one for PostgreSQL) or as async/await costs per transaction, against the synchronous
// code of today. Two statements a transaction (an upsert and a journal insert), in memory.
//   bun bench/tx-shape.ts
import { Database } from "bun:sqlite";

const db = new Database(":memory:");
db.exec("CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
db.exec("CREATE TABLE journal (revision INTEGER PRIMARY KEY, kind TEXT, resource TEXT)");
const upsert = db.query<{ value: number }, [string]>(
  "INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value",
);
const append = db.query("INSERT INTO journal (kind, resource) VALUES (?, ?)");
const begin = db.query("BEGIN");
const commit = db.query("COMMIT");

// Today: plain synchronous calls.
function record(kind: string, resource: string): number {
  return Number(append.run(kind, resource).lastInsertRowid);
}
function direct(name: string): number {
  begin.run();
  const v = upsert.get(name)!.value;
  record("counter.changed", name);
  commit.run();
  return v;
}

// Generators: each statement is yielded to a driver; SQLite's driver answers at once, so the
// transaction still runs in one go, with no event-loop turn in the middle.
type Query = { run: () => unknown };
function* ask<R>(run: () => R): Generator<Query, R, unknown> {
  return (yield { run }) as R;
}
function* genRecord(kind: string, resource: string): Generator<Query, number, unknown> {
  const r = yield* ask(() => append.run(kind, resource));
  return Number(r.lastInsertRowid);
}
function* genIncrement(name: string): Generator<Query, number, unknown> {
  const row = yield* ask(() => upsert.get(name)!);
  yield* genRecord("counter.changed", name);
  return row.value;
}
function runSync<R>(g: Generator<Query, R, unknown>): R {
  let step = g.next();
  while (!step.done) step = g.next(step.value.run());
  return step.value;
}
function generators(name: string): number {
  begin.run();
  const v = runSync(genIncrement(name));
  commit.run();
  return v;
}

// async/await: every statement an await (a microtask), as a PostgreSQL-ready domain would be.
async function asyncRecord(kind: string, resource: string): Promise<number> {
  return Number((await Promise.resolve(append.run(kind, resource))).lastInsertRowid);
}
async function asyncIncrement(name: string): Promise<number> {
  const row = await Promise.resolve(upsert.get(name)!);
  await asyncRecord("counter.changed", name);
  return row.value;
}
async function asyncTx(name: string): Promise<number> {
  begin.run();
  const v = await asyncIncrement(name);
  commit.run();
  return v;
}

const N = 200_000;
const perTx = (ms: number) => `${((ms / N) * 1000).toFixed(2)} µs`;
for (let round = 0; round < 3; round++) {
  let t = performance.now();
  for (let i = 0; i < N; i++) direct(`c${i % 100}`);
  const d = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < N; i++) generators(`c${i % 100}`);
  const g = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < N; i++) await asyncTx(`c${i % 100}`);
  const a = performance.now() - t;
  console.log(`per transaction: synchronous ${perTx(d)}, generators ${perTx(g)}, async/await ${perTx(a)}`);
}
