// Each store's schema read back from the database itself into one comparable shape, for the
// schema-parity test: tables, columns with their type class and nullability, the primary key,
// every other index (unique or not, its columns in order with DESC, and its WHERE), named when
// it was created by name (CREATE INDEX) and anonymous when a constraint made it, and foreign keys.
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

/** A column type by what it holds; PostgreSQL's BOOLEAN is stored as INTEGER 0/1 on SQLite. */
export type TypeClass = "integer" | "text" | "real" | "blob" | "bool" | "numeric";

export interface Column {
  cls: TypeClass;
  notNull: boolean;
}

export interface Table {
  columns: Map<string, Column>;
  primaryKey: string[];
  /** e.g. "UNIQUE (lease_token)", "tasks_pending (queue, state, priority DESC, id)", "locks_agent (agent_id) WHERE agent_id IS NOT NULL". */
  indexes: Set<string>;
  /** e.g. "(pool) → pools (name)". */
  foreignKeys: Set<string>;
}

export type Schema = Map<string, Table>;

/** SQLite's affinity rules (https://sqlite.org/datatype3.html, 3.1), on the declared type. */
export function sqliteClass(declared: string): TypeClass {
  const t = declared.toUpperCase();
  if (t.includes("INT")) return "integer";
  if (/CHAR|CLOB|TEXT/.test(t)) return "text";
  if (t === "" || t.includes("BLOB") || t === "ANY") return "blob";
  if (/REAL|FLOA|DOUB/.test(t)) return "real";
  return "numeric";
}

/** PostgreSQL's information_schema data_type, by class. */
export function pgClass(dataType: string): TypeClass {
  if (["bigint", "integer", "smallint"].includes(dataType)) return "integer";
  if (["text", "character varying", "character", "json", "jsonb"].includes(dataType)) return "text";
  if (["double precision", "real"].includes(dataType)) return "real";
  if (dataType === "boolean") return "bool";
  if (dataType === "bytea") return "blob";
  return "numeric";
}

/** An index predicate in one spelling: PostgreSQL's pg_get_expr adds casts and parentheses. */
export function normalizePredicate(pred: string): string {
  return pred
    .replace(/::[a-z ]+/gi, "")
    .replace(/[()]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

function indexKey(name: string | null, unique: boolean, cols: string[], pred: string | null): string {
  return `${unique ? "UNIQUE " : ""}${name ? `${name} ` : ""}(${cols.join(", ")})${pred ? ` WHERE ${normalizePredicate(pred)}` : ""}`;
}

/** The schema of a SQLite database (the one `migrate()` leaves). */
export function sqliteSchema(db: Database): Schema {
  const out: Schema = new Map();
  const tables = db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
  for (const { name } of tables) {
    const cols = db.query(`PRAGMA table_xinfo("${name}")`).all() as { name: string; type: string; notnull: number; pk: number; hidden: number }[];
    const columns = new Map<string, Column>();
    const pk: { name: string; pk: number }[] = [];
    for (const c of cols) {
      if (c.hidden !== 0) continue;
      // A primary key column is NOT NULL on PostgreSQL; SQLite lets a rowid table's non-INTEGER
      // key hold NULL (a legacy quirk), which Airlock never writes: compare them as NOT NULL.
      columns.set(c.name, { cls: sqliteClass(c.type), notNull: c.notnull === 1 || c.pk > 0 });
      if (c.pk > 0) pk.push(c);
    }
    const indexes = new Set<string>();
    const list = db.query(`PRAGMA index_list("${name}")`).all() as { name: string; unique: number; origin: string; partial: number }[];
    for (const ix of list) {
      if (ix.origin === "pk") continue;
      const keys = (db.query(`PRAGMA index_xinfo("${ix.name}")`).all() as { name: string | null; desc: number; key: number }[]).filter((k) => k.key === 1);
      const colsOf = keys.map((k) => `${k.name ?? "<expr>"}${k.desc ? " DESC" : ""}`);
      let pred: string | null = null;
      if (ix.partial) {
        const sql = (db.query("SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?").get(ix.name) as { sql: string }).sql;
        pred = /\bWHERE\b([\s\S]*)$/i.exec(sql)?.[1] ?? null;
      }
      indexes.add(indexKey(ix.origin === "c" ? ix.name : null, ix.unique === 1, colsOf, pred));
    }
    const fks = db.query(`PRAGMA foreign_key_list("${name}")`).all() as { id: number; seq: number; table: string; from: string; to: string | null }[];
    const foreignKeys = new Set<string>();
    for (const id of new Set(fks.map((f) => f.id))) {
      const parts = fks.filter((f) => f.id === id).sort((a, b) => a.seq - b.seq);
      foreignKeys.add(`(${parts.map((f) => f.from).join(", ")}) → ${parts[0]!.table} (${parts.map((f) => f.to ?? "<its primary key>").join(", ")})`);
    }
    out.set(name, { columns, primaryKey: pk.sort((a, b) => a.pk - b.pk).map((c) => c.name), indexes, foreignKeys });
  }
  return out;
}

/** The schema of a PostgreSQL database, in the connection's current schema (where the migrations ran). */
export async function pgSchema(sql: SQL): Promise<Schema> {
  const out: Schema = new Map();
  const cols = (await sql.unsafe(
    `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
     WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  )) as { table_name: string; column_name: string; data_type: string; is_nullable: string }[];
  for (const c of cols) {
    let t = out.get(c.table_name);
    if (!t) out.set(c.table_name, (t = { columns: new Map(), primaryKey: [], indexes: new Set(), foreignKeys: new Set() }));
    t.columns.set(c.column_name, { cls: pgClass(c.data_type), notNull: c.is_nullable === "NO" });
  }
  const ixs = (await sql.unsafe(
    `SELECT t.relname AS table_name, i.relname AS index_name, ix.indisunique AS is_unique, ix.indisprimary AS is_primary,
            EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = ix.indexrelid) AS by_constraint,
            pg_get_expr(ix.indpred, ix.indrelid) AS pred,
            (SELECT string_agg(pg_get_indexdef(ix.indexrelid, k + 1, true) || CASE WHEN ix.indoption[k] & 1 = 1 THEN ' DESC' ELSE '' END, ',' ORDER BY k)
               FROM generate_subscripts(ix.indkey, 1) AS k) AS cols
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = current_schema()`,
  )) as { table_name: string; index_name: string; is_unique: boolean; is_primary: boolean; by_constraint: boolean; pred: string | null; cols: string }[];
  for (const ix of ixs) {
    const t = out.get(ix.table_name);
    if (!t) continue;
    const colsOf = ix.cols.split(",");
    if (ix.is_primary) t.primaryKey = colsOf;
    else t.indexes.add(indexKey(ix.by_constraint ? null : ix.index_name, ix.is_unique, colsOf, ix.pred));
  }
  const fks = (await sql.unsafe(
    `SELECT t.relname AS table_name, r.relname AS ref_table,
            (SELECT string_agg(a.attname, ', ' ORDER BY k.n) FROM unnest(con.conkey) WITH ORDINALITY AS k(att, n)
               JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.att) AS cols,
            (SELECT string_agg(a.attname, ', ' ORDER BY k.n) FROM unnest(con.confkey) WITH ORDINALITY AS k(att, n)
               JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.att) AS ref_cols
       FROM pg_constraint con
       JOIN pg_class t ON t.oid = con.conrelid
       JOIN pg_class r ON r.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE con.contype = 'f' AND n.nspname = current_schema()`,
  )) as { table_name: string; ref_table: string; cols: string; ref_cols: string }[];
  for (const f of fks) out.get(f.table_name)?.foreignKeys.add(`(${f.cols}) → ${f.ref_table} (${f.ref_cols})`);
  return out;
}

/** A difference the parity test does not fail on, with the reason it is there. */
export interface Accepted {
  /** "table.column", or "table index <the index's key as indexKey prints it>". */
  what: string;
  only: "sqlite" | "postgres";
  why: string;
}

/** Every difference between the two schemas, over the tables both have, minus the accepted ones. */
export function differences(lite: Schema, pg: Schema, accepted: readonly Accepted[]): string[] {
  const ok = new Set(accepted.map((a) => `${a.only}:${a.what}`));
  const out: string[] = [];
  for (const [name, a] of lite) {
    const b = pg.get(name);
    if (!b) continue;
    for (const [col, ca] of a.columns) {
      const cb = b.columns.get(col);
      if (!cb) {
        if (!ok.has(`sqlite:${name}.${col}`)) out.push(`${name}.${col}: only on SQLite`);
        continue;
      }
      const same = ca.cls === cb.cls || (ca.cls === "integer" && cb.cls === "bool");
      if (!same) out.push(`${name}.${col}: ${ca.cls} on SQLite, ${cb.cls} on PostgreSQL`);
      if (ca.notNull !== cb.notNull) out.push(`${name}.${col}: ${ca.notNull ? "NOT NULL" : "nullable"} on SQLite, ${cb.notNull ? "NOT NULL" : "nullable"} on PostgreSQL`);
    }
    for (const col of b.columns.keys()) {
      if (!a.columns.has(col) && !ok.has(`postgres:${name}.${col}`)) out.push(`${name}.${col}: only on PostgreSQL`);
    }
    if (a.primaryKey.join(",") !== b.primaryKey.join(",")) out.push(`${name}: primary key (${a.primaryKey}) on SQLite, (${b.primaryKey}) on PostgreSQL`);
    for (const ix of a.indexes) if (!b.indexes.has(ix) && !ok.has(`sqlite:${name} index ${ix}`)) out.push(`${name} index ${ix}: only on SQLite`);
    for (const ix of b.indexes) if (!a.indexes.has(ix) && !ok.has(`postgres:${name} index ${ix}`)) out.push(`${name} index ${ix}: only on PostgreSQL`);
    for (const fk of a.foreignKeys) if (!b.foreignKeys.has(fk)) out.push(`${name} foreign key ${fk}: only on SQLite`);
    for (const fk of b.foreignKeys) if (!a.foreignKeys.has(fk)) out.push(`${name} foreign key ${fk}: only on PostgreSQL`);
  }
  return out.sort();
}
