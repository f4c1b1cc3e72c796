// The PostgreSQL server a bench's daemons share: --pg URL, else AIRLOCK_TEST_PG (as the tests
// take it; `.ci/pg.sh start DIR` prints one). Without either, the usage line and exit 2.
export function pgServer(given: string | undefined, usage: string): string {
  const server = given ?? process.env.AIRLOCK_TEST_PG;
  if (!server) {
    console.error(`usage: ${usage}  (or set AIRLOCK_TEST_PG)`);
    process.exit(2);
  }
  // The test helpers read it when they load: import them after this.
  process.env.AIRLOCK_TEST_PG = server;
  return server;
}
