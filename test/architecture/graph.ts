// The import graph of src/, as the architecture test reads it: every import, export-from,
// `import type`, `import x = require()` and dynamic `import()` of every .ts file, parsed with
// TypeScript's own parser (so a type-only import is an edge too: a circle of types is still a
// circle a reader has to untangle), resolved to files relative to the repository.
import { existsSync, readFileSync } from "node:fs";
import { join, posix, relative } from "node:path";
import ts from "typescript";

/** file (relative to the repository, "src/...") → the files it imports. */
export type Graph = Map<string, Set<string>>;

/** The module specifiers one source text imports, in order. */
export function specifiers(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const e = node.moduleReference.expression;
      if (ts.isStringLiteral(e)) out.push(e.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) out.push(arg.text);
      else throw new Error(`${file}: a dynamic import() of a computed name cannot be checked; name the module`);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push(node.argument.literal.text); // `typeof import("./x.ts")` in a type
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The graph of every .ts file under `root/dir`; only relative specifiers are edges (packages and node: are outside). */
export function readGraph(root: string, dir = "src"): Graph {
  const g: Graph = new Map();
  for (const f of new Bun.Glob(`${dir}/**/*.ts`).scanSync(root)) {
    const file = f.split("\\").join("/");
    const to = new Set<string>();
    for (const s of specifiers(file, readFileSync(join(root, file), "utf8"))) {
      if (!s.startsWith(".")) continue;
      to.add(posix.normalize(posix.join(posix.dirname(file), s)));
    }
    g.set(file, to);
  }
  return g;
}

/** Edges to files that are not there (a resolver or spelling mistake would hide an edge). */
export function unresolved(root: string, g: Graph): string[] {
  const out: string[] = [];
  for (const [from, tos] of g) for (const to of tos) if (!g.has(to) && !existsSync(join(root, to))) out.push(`${from} → ${to}`);
  return out;
}

/**
 * Every circle, one per strongly connected component of more than one file (or a file that
 * imports itself), printed as a path that returns to its start: a → b → c → a.
 */
export function cycles(g: Graph): string[][] {
  // Tarjan's algorithm; recursion is fine at this size (a few hundred files).
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const comps: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || g.get(v)?.has(v)) comps.push(comp);
    }
  };
  for (const v of [...g.keys()].sort()) if (!idx.has(v)) strong(v);
  return comps.map((c) => circleThrough(g, new Set(c)));
}

/** One concrete circle inside a strongly connected component: the shortest way back to its first file. */
function circleThrough(g: Graph, comp: Set<string>): string[] {
  const start = [...comp].sort()[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of [...(g.get(v) ?? [])].sort()) {
      if (!comp.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
        return [...path, start];
      }
      if (!prev.has(w) && w !== start) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** The top folder of a file under src/ ("src/domain/glob/x.ts" → "domain", "src/main.ts" → "main.ts"). */
export function topOf(file: string, dir = "src"): string {
  const rest = relative(dir, file).split(/[\\/]/);
  return rest[0]!;
}
