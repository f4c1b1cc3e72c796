import { describe, expect, test } from "bun:test";
// The kernel's one list of primitives (src/domain/kernel.ts) against the schemas and the sources:
// a table some primitive reads but does not declare would, on a shared store, leave that
// primitive's memory stale after another daemon's write (its refresh never runs), so every
// table of either schema is declared by a primitive or named in UNOWNED_TABLES, and the SQL of
// every primitive's source names only tables it declares.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { UNOWNED_TABLES } from "../../src/domain/primitive.ts";
import { all } from "../../src/store/tx.ts";
import { useKernel } from "../helpers/kernel.ts";

const ROOT = join(import.meta.dir, "../..");
const DOMAIN = join(ROOT, "src/domain");
const MIGRATIONS = { sqlite: join(ROOT, "src/store/migrations"), postgres: join(ROOT, "src/store/migrations/pg") };

/** Files of src/domain that name tables in SQL and are no primitive's: why they declare nothing. */
const NOT_PRIMITIVES: Record<string, string> = {
  "cluster.ts": "the cluster's bookkeeping (waiters, grants, daemons), which it reloads itself",
  "cluster-sync.ts": "the cluster version protocol (airlock_sync, airlock_changes): statements the store's driver sends around every transaction, nothing cached",
  "lines.ts": "the waiter lines' one stored form (waiters) for every queue: loaded at start on SQLite, written at the end of each transaction that changed a line, reloaded by the cluster",
  "snapshot.ts": "the read-only views of status and the dashboard: every table read afresh at each call, nothing kept",
};

const t = useKernel();

/** The tables a dialect's migrations leave, applied in order (creates, drops and renames). */
function schemaTables(dir: string): Set<string> {
  const tables = new Set<string>();
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  for (const f of files) {
    const sql = readFileSync(join(dir, f), "utf8").replace(/--.*$/gm, "");
    for (const m of sql.matchAll(/\b(CREATE TABLE(?: IF NOT EXISTS)?|DROP TABLE(?: IF EXISTS)?|ALTER TABLE)\s+(\w+)(?:\s+RENAME TO\s+(\w+))?/gi)) {
      const [, verb, name, to] = m as unknown as [string, string, string, string | undefined];
      if (/^CREATE/i.test(verb)) tables.add(name);
      else if (/^DROP/i.test(verb)) tables.delete(name);
      else if (to) {
        tables.delete(name);
        tables.add(to);
      }
    }
  }
  return tables;
}

/** The schema tables a source names in SQL. */
function tablesNamed(file: string, schema: ReadonlySet<string>): Set<string> {
  const text = readFileSync(file, "utf8");
  const named = new Set<string>();
  for (const m of text.matchAll(/\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+(\w+)/g)) if (schema.has(m[1]!)) named.add(m[1]!);
  return named;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** A primitive's own files: src/domain/<name>.ts, or everything under src/domain/<name>/. */
function ownFiles(name: string): string[] {
  const file = join(DOMAIN, `${name}.ts`);
  const dir = join(DOMAIN, name);
  return [...(existsSync(file) ? [file] : []), ...(existsSync(dir) ? sources(dir) : [])];
}

/** Its own files and the domain helpers they import for their values (fences.ts), but not other primitives. */
function filesOf(name: string, primitiveFiles: ReadonlySet<string>): string[] {
  const seen = new Set(ownFiles(name));
  const todo = [...seen];
  while (todo.length > 0) {
    const file = todo.pop()!;
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^import (?!type )[^;]*? from "(\.[^"]+\.ts)";/gm)) {
      const dep = join(dirname(file), m[1]!);
      if (!dep.startsWith(DOMAIN) || primitiveFiles.has(dep) || seen.has(dep)) continue;
      seen.add(dep);
      todo.push(dep);
    }
  }
  return [...seen];
}

const sqlite = schemaTables(MIGRATIONS.sqlite);
const postgres = schemaTables(MIGRATIONS.postgres);
const schema = new Set([...sqlite, ...postgres]);

describe("the kernel's list of primitives", () => {
  test("reads the SQLite migrations as SQLite applies them", async () => {
    const rows = await t.kernel.ctx.read(() => all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"));
    expect(rows.map((r) => r.name).sort()).toEqual([...sqlite].sort());
  });

  test("every table of either schema is some primitive's, or named as no primitive's", () => {
    const declared = new Set(t.kernel.primitives.flatMap((p) => p.tables));
    const unclaimed = [...schema].filter((name) => !declared.has(name) && !(name in UNOWNED_TABLES));
    expect(unclaimed).toEqual([]); // declare it in src/domain/kernel.ts, or in UNOWNED_TABLES (src/domain/primitive.ts) with a reason
    expect(Object.keys(UNOWNED_TABLES).filter((name) => declared.has(name))).toEqual([]);
  });

  test("every table a primitive or UNOWNED_TABLES names exists in a schema", () => {
    const named = [...t.kernel.primitives.flatMap((p) => p.tables.map((table) => `${p.name}:${table}`)), ...Object.keys(UNOWNED_TABLES).map((table) => `unowned:${table}`)];
    expect(named.filter((n) => !schema.has(n.split(":")[1]!))).toEqual([]);
  });

  test("the SQL of each primitive's sources names only tables it declares", () => {
    const primitiveFiles = new Set(t.kernel.primitives.flatMap((p) => ownFiles(p.name)));
    const undeclared: string[] = [];
    for (const p of t.kernel.primitives) {
      for (const file of filesOf(p.name, primitiveFiles)) {
        for (const table of tablesNamed(file, schema)) if (!p.tables.includes(table)) undeclared.push(`${p.name} (${relative(DOMAIN, file)}): ${table}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  test("no other source of src/domain reads a table, but those named with a reason", () => {
    const own = new Set(t.kernel.primitives.flatMap((p) => ownFiles(p.name)));
    const reached = new Set(t.kernel.primitives.flatMap((p) => filesOf(p.name, own)));
    const readers = sources(DOMAIN).filter((f) => !reached.has(f) && tablesNamed(f, schema).size > 0);
    expect(readers.map((f) => relative(DOMAIN, f)).sort()).toEqual(Object.keys(NOT_PRIMITIVES).sort());
  });

  test("every wait queue is one primitive's, so close answers its blocked calls", () => {
    const owned = t.kernel.primitives.flatMap((p) => (p.waits ? [p.waits] : []));
    expect(new Set(owned).size).toBe(owned.length);
    expect([...t.kernel.ctx.queues.values()].filter((q) => !owned.includes(q)).map((q) => q.name)).toEqual([]);
  });

  test("what each primitive declares it reads ahead is what its refresh sends first", () => {
    // A shared store's BEGIN sends `reads` ahead and the refresh finds them answered only when
    // they are its own statements, text and values (docs/cluster.md, "Deltas read with the BEGIN").
    const since = 41;
    const checked: string[] = [];
    for (const p of t.kernel.primitives) {
      if (!p.reads) continue;
      const body = p.refresh!(since);
      const first = body.next();
      body.return(undefined);
      const sent = first.done ? [] : (first.value.reads ?? [first.value]);
      const shape = (s: { sql: string; args: unknown[]; mode: string }) => [s.sql, s.args, s.mode];
      expect(sent.map(shape)).toEqual(p.reads(since).map(shape));
      checked.push(p.name);
    }
    // (The working trees' deltas are by horizon: their reads are what the catch-up sends itself, Primitive.horizon.)
    expect(checked).toEqual(["locks", "presence", "tasks", "pools", "paths"]);
  });

  test("names each primitive once, after its source", () => {
    const names = t.kernel.primitives.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((n) => ownFiles(n).length === 0)).toEqual([]);
  });
});
