// The lock row body asks the stored lines whether anyone stands in one name's line
// (src/domain/lines.ts, standsIn) with `keys LIKE containing(JSON of the name)`, then checks
// what matched. That is only right if the pattern never misses a row whose keys hold the name,
// whatever the names are made of: LIKE's wildcards, the escape character, quotes, backslashes,
// case, lone surrogates. Checked against a brute-force answer on SQLite and, with
// AIRLOCK_TEST_PG, on PostgreSQL: the engines the shared store and the file store run.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { containing } from "../../src/domain/lines.ts";
import { seeded } from "../helpers/cluster.ts";
import { describePg, freshDatabase, withClient } from "../helpers/pg.ts";

const ALPHABET = ["a", "A", "b", "%", "_", "!", '"', "\\", "/", ":", " ", "é", "É", "\u{1F512}", "\ud800".toWellFormed(), "\n", "[", "]", ","];

function names(int: (n: number) => number): string[] {
  const out = new Set<string>();
  while (out.size < 24) {
    let s = "";
    for (let i = 1 + int(5); i > 0; i--) s += ALPHABET[int(ALPHABET.length)];
    out.add(s);
  }
  return [...out];
}

/** Places in line: each a JSON array of 1–3 names, as lines.ts stores a place's keys. */
function places(pool: string[], int: (n: number) => number): string[] {
  return Array.from({ length: 40 }, () => JSON.stringify(Array.from({ length: 1 + int(3) }, () => pool[int(pool.length)]!)));
}

/** For each name: the places standsIn finds (the pattern's matches, then the parse) and the truth. */
async function check(query: (pattern: string) => Promise<string[]>, pool: string[], stored: string[]) {
  for (const name of [...pool, "absent"]) {
    const matched = await query(containing(JSON.stringify(name)));
    const truth = stored.filter((k) => (JSON.parse(k) as string[]).includes(name));
    // Every place holding the name comes back (the pattern may bring others: the parse drops them).
    for (const k of truth) expect(matched).toContain(k);
    expect(matched.filter((k) => (JSON.parse(k) as string[]).includes(name)).sort()).toEqual([...truth].sort());
  }
}

test("the pattern escapes LIKE's wildcards and its own escape character", () => {
  expect(containing('"a%b_c!d"')).toBe('%"a!%b!_c!!d"%');
  expect(containing("plain")).toBe("%plain%");
});

test("on SQLite, the pattern finds every stored place whose keys hold a name (random hostile names)", async () => {
  const { int } = seeded("lines LIKE on SQLite");
  const db = new Database(":memory:", { strict: true });
  db.exec("CREATE TABLE waiters (token TEXT PRIMARY KEY, queue TEXT NOT NULL, keys TEXT NOT NULL) STRICT");
  for (let round = 0; round < 5; round++) {
    db.exec("DELETE FROM waiters");
    const pool = names(int);
    const stored = places(pool, int);
    for (const [i, keys] of stored.entries()) db.query("INSERT INTO waiters VALUES (?, 'lock', ?)").run(`t${i}`, keys);
    const q = db.query<{ keys: string }, [string]>("SELECT keys FROM waiters WHERE queue = 'lock' AND keys LIKE ? ESCAPE '!'");
    await check(async (pattern) => q.all(pattern).map((r) => r.keys), pool, stored);
  }
  db.close();
});

describePg("the stored lines on PostgreSQL", () => {
  test("the pattern finds every stored place whose keys hold a name (random hostile names)", async () => {
    const { int } = seeded("lines LIKE on PostgreSQL");
    const fresh = await freshDatabase();
    try {
      await withClient(fresh.url, async (sql) => {
        await sql.unsafe("CREATE TABLE waiters (token TEXT PRIMARY KEY, queue TEXT NOT NULL, keys TEXT NOT NULL)");
        for (let round = 0; round < 5; round++) {
          await sql.unsafe("DELETE FROM waiters");
          const pool = names(int);
          const stored = places(pool, int);
          for (const [i, keys] of stored.entries()) await sql.unsafe("INSERT INTO waiters VALUES ($1, 'lock', $2)", [`t${i}`, keys]);
          await check(async (pattern) => ((await sql.unsafe("SELECT keys FROM waiters WHERE queue = 'lock' AND keys LIKE $1 ESCAPE '!'", [pattern])) as { keys: string }[]).map((r) => r.keys), pool, stored);
        }
      });
    } finally {
      await fresh.drop();
    }
  });
});
