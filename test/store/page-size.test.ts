// A database the store creates has small pages (a commit writes fewer bytes); one made before,
// with SQLite's default, keeps its own, and both work the same.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { run } from "../../src/store/tx.ts";
import { openStore, PAGE_SIZE } from "../../src/store/db.ts";
import { tempDbPath } from "../domain/support.ts";

const pageSize = (db: Database) => (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;

test("a new database gets PAGE_SIZE pages; an existing one keeps its page size and its rows", () => {
  const fresh = tempDbPath();
  const old = tempDbPath();
  try {
    const a = openStore(fresh.path, { durability: "full" });
    expect(PAGE_SIZE).toBe(1024);
    expect(pageSize(a.db)).toBe(PAGE_SIZE);
    a.close();

    const made = new Database(old.path, { create: true });
    made.exec("PRAGMA journal_mode = WAL");
    made.exec("CREATE TABLE before_us (x INTEGER)");
    made.close();
    const b = openStore(old.path);
    expect(pageSize(b.db)).toBe(4096);
    b.tx(function* () {
      yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", "c", 1);
    });
    b.close();
    const again = openStore(old.path);
    expect(pageSize(again.db)).toBe(4096);
    expect(again.db.query("SELECT value FROM counters WHERE name = 'c'").get()).toEqual({ value: 1 });
    again.close();
  } finally {
    fresh.cleanup();
    old.cleanup();
  }
});
