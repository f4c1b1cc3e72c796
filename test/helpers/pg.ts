// A PostgreSQL server for the tests that need one: AIRLOCK_TEST_PG names it (a URL such as the
// one `.ci/pg.sh start DIR` prints). Without it, those suites are skipped, visibly. Each test
// that needs a clean slate gets a database of its own, dropped when it is done.
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

/** A new, empty database on the test server; drop() ends its connections and removes it. */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  if (!PG_URL) throw new Error("AIRLOCK_TEST_PG is not set");
  const server = PG_URL;
  const name = `airlock_t_${randomBytes(6).toString("hex")}`;
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
