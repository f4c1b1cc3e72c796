// A PostgreSQL server for the tests that need one: AIRLOCK_TEST_PG names it (a URL such as the
// one `.ci/pg.sh start DIR` prints). Without it, those suites are skipped, visibly. Each test
// that needs a clean slate gets a database of its own, dropped when it is done. A database
// name carries the test process's pid: the e2e suite on PostgreSQL cannot drop its daemons'
// databases (a restart reuses one), so the next run drops those of processes that are gone.
import { describe } from "bun:test";
import { SQL } from "bun";
import { randomBytes } from "node:crypto";

export const PG_URL = process.env.AIRLOCK_TEST_PG || undefined;

export const describePg = PG_URL ? describe : describe.skip;

/** Runs fn with a one-connection client to url, closed afterwards. */
export async function withClient<T>(url: string, fn: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await fn(sql);
  } finally {
    await sql.close();
  }
}

let swept: Promise<void> | undefined;

/** Drops the test databases left by test processes that no longer run. */
async function sweep(server: string): Promise<void> {
  await withClient(server, async (sql) => {
    const rows = (await sql.unsafe("SELECT datname FROM pg_database WHERE datname LIKE 'airlock_t_%'")) as { datname: string }[];
    for (const { datname } of rows) {
      const pid = Number(/^airlock_t_(\d+)_/.exec(datname)?.[1] ?? Number.NaN);
      if (Number.isInteger(pid) && alive(pid)) continue; // another run, still going (or our own)
      await sql.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
    }
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A new, empty database on the test server; drop() ends its connections and removes it. */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  if (!PG_URL) throw new Error("AIRLOCK_TEST_PG is not set");
  const server = PG_URL;
  swept ??= sweep(server);
  await swept;
  const name = `airlock_t_${process.pid}_${randomBytes(4).toString("hex")}`;
  await withClient(server, (sql) => sql.unsafe(`CREATE DATABASE ${name}`));
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      await withClient(server, async (sql) => {
        await sql.unsafe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]);
        // FORCE: a store that is still reconnecting cannot keep the database alive.
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}
