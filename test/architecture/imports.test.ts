// The shape of src/ as a rule the suite enforces (docs/design.md, "Folder map"): no import
// circle anywhere, type imports and dynamic import() included, and every edge between top folders
// of src/ goes down the layer order below. A new upward edge or circle fails here, printed.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cycles, type Graph, readGraph, specifiers, topOf, unresolved } from "./graph.ts";

const ROOT = join(import.meta.dir, "../..");

/**
 * The layers of src/, top first. A file may import only from its own top folder or from a
 * strictly lower layer; two entries of one layer may not import each other.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["main.ts"], // the entry: runs the CLI
  ["cli"], // one command per file
  ["daemon.ts", "clients", "service"], // what the CLI starts, sets up, installs
  ["mcp"], // the HTTP layer: MCP over JSON-RPC, the guard, the dashboard's server side
  ["ui"], // the dashboard's browser code, embedded by the HTTP layer (its index.html)
  ["domain"], // the primitives, the kernel, the journal, the wait-for graph
  ["store"], // SQLite and PostgreSQL behind one seam
  // Leaves every layer above may use, in their own order:
  ["log.ts", "trace.ts"], // trace.ts: the bench's server-side marks (AIRLOCK_TRACE)
  ["config"],
  ["machine", "shell.ts", "version.ts"],
  ["errors.ts", "sql.d.ts"],
];

/** Folders that may import only these (besides themselves), whatever their layer allows. */
export const ONLY: Readonly<Record<string, readonly string[]>> = {
  // The browser bundle takes the snapshot's view types and the pure deadlock label, nothing
  // with a store, a log or a process behind it (src/ui/tsconfig.json type-checks it with the DOM).
  ui: ["domain"],
};

/** Folders that the layers above reach only through these files. */
export const ENTRIES: Readonly<Record<string, readonly string[]>> = {
  ui: ["src/ui/index.html"], // the bundle's entry, which the HTTP layer embeds and serves
};

/** Files outside src/ that src/ may import. */
const OUTSIDE = new Set(["package.json"]); // version.ts bakes the version in

const rank = new Map(LAYERS.flatMap((layer, i) => layer.map((top) => [top, i] as const)));

/** Every edge that breaks the layer order, as "from → to (why)". */
export function violations(g: Graph, dir = "src"): string[] {
  const out: string[] = [];
  for (const [from, tos] of g) {
    const a = topOf(from, dir);
    for (const to of tos) {
      if (!to.startsWith(`${dir}/`)) {
        if (!OUTSIDE.has(to)) out.push(`${from} → ${to} (outside ${dir}/)`);
        continue;
      }
      const b = topOf(to, dir);
      if (a === b) continue;
      const ra = rank.get(a);
      const rb = rank.get(b);
      if (ra === undefined) out.push(`${from} → ${to} (${a} is in no layer: add it to LAYERS)`);
      else if (rb === undefined) out.push(`${from} → ${to} (${b} is in no layer: add it to LAYERS)`);
      else if (ONLY[a] && !ONLY[a].includes(b)) out.push(`${from} → ${to} (${a} may import only ${ONLY[a].join(", ")})`);
      else if (ra >= rb) out.push(`${from} → ${to} (${a} is ${ra === rb ? "beside" : "below"} ${b})`);
      else if (ENTRIES[b] && !ENTRIES[b].includes(to)) out.push(`${from} → ${to} (${b} is reached only through ${ENTRIES[b].join(", ")})`);
    }
  }
  return out.sort();
}

const graph = readGraph(ROOT);
const show = (circles: string[][]) => circles.map((c) => c.join(" → "));

describe("the import graph of src/", () => {
  test("is read in full: every file, every relative import resolved to a file that exists", () => {
    expect(graph.size).toBeGreaterThan(100); // 129 .ts files when written
    expect(unresolved(ROOT, graph)).toEqual([]);
    expect(graph.get("src/daemon.ts")).toContain("src/mcp/dashboard.ts");
  });

  test("has no circle, type imports included", () => {
    expect(show(cycles(graph))).toEqual([]);
  });

  test("goes only down the layer order between top folders", () => {
    expect(violations(graph)).toEqual([]);
  });

  test("src/ui/ holds only browser code: no package, node: or bun: import in any of its files", () => {
    const server = [...new Bun.Glob("src/ui/*.ts").scanSync(ROOT)].flatMap((f) =>
      specifiers(f, readFileSync(join(ROOT, f), "utf8"))
        .filter((s) => !s.startsWith("."))
        .map((s) => `${f} → ${s}`),
    );
    expect(server).toEqual([]);
  });

  test("every top folder of src/ has a layer", () => {
    const tops = new Set([...graph.keys()].map((f) => topOf(f)));
    expect([...tops].filter((t) => !rank.has(t))).toEqual([]);
  });
});

describe("the checker itself", () => {
  const g = (edges: Record<string, string[]>): Graph => new Map(Object.entries(edges).map(([k, v]) => [k, new Set(v)]));

  test("reads type imports, export-from, dynamic import() and import type nodes as edges", () => {
    const text = [
      `import type { A } from "./a.ts";`,
      `import { type B } from "./b.ts";`,
      `export { C } from "./c.ts";`,
      `export type * from "./d.ts";`,
      `const e = await import("./e.ts");`,
      `let f: typeof import("./f.ts");`,
      `import "./g.ts";`,
      `// import { no } from "./comment.ts";`,
      "const s = `import x from './string.ts'`;",
    ].join("\n");
    expect(specifiers("x.ts", text)).toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts", "./f.ts", "./g.ts"]);
  });

  test("finds a circle in a synthetic graph and prints it as a path back to its start", () => {
    const circles = cycles(g({ "src/a.ts": ["src/b.ts"], "src/b.ts": ["src/c.ts"], "src/c.ts": ["src/a.ts", "src/d.ts"], "src/d.ts": [] }));
    expect(show(circles)).toEqual(["src/a.ts → src/b.ts → src/c.ts → src/a.ts"]);
    expect(show(cycles(g({ "src/a.ts": ["src/a.ts"] })))).toEqual(["src/a.ts → src/a.ts"]);
    expect(cycles(g({ "src/a.ts": ["src/b.ts"], "src/b.ts": [] }))).toEqual([]);
  });

  test("refuses an upward edge, an edge between peers, an edge the browser bundle may not take, and one past its entry", () => {
    const bad = g({
      "src/domain/x.ts": ["src/mcp/server.ts", "src/store/db.ts"],
      "src/clients/y.ts": ["src/service/z.ts"],
      "src/ui/app.ts": ["src/log.ts", "src/domain/snapshot.ts"],
      "src/mcp/server.ts": ["src/ui/serve.ts", "src/ui/index.html"],
    });
    expect(violations(bad)).toEqual([
      "src/clients/y.ts → src/service/z.ts (clients is beside service)",
      "src/domain/x.ts → src/mcp/server.ts (domain is below mcp)",
      "src/mcp/server.ts → src/ui/serve.ts (ui is reached only through src/ui/index.html)",
      "src/ui/app.ts → src/log.ts (ui may import only domain)",
    ]);
  });
});
