import { describe, expect, test } from "bun:test";
// No module-level mutable state in src/domain: a number, map or list at the top of a module is
// shared by every kernel in the process (domain tests build one per test, a bench builds two),
// so one kernel's traffic would change another's answers. State lives in the kernel (createCtx,
// the primitives). The rule, per top-level declaration of every file under src/domain:
// - `let` and `var` are state;
// - a `const` holding a new Map, Set, WeakMap, WeakSet or Array is state;
// - a `const` holding an array literal is state unless typed readonly (or `as const`);
// - a class's `static` field that is not readonly is state.
// The exceptions below are memo caches of pure functions: sharing them changes no answer.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { createKernel } from "../../src/domain/kernel.ts";
import { openStore } from "../../src/store/db.ts";
import { ManualClock } from "../../src/domain/clock.ts";
import { flush, track } from "./support.ts";

const DOMAIN = join(import.meta.dir, "../../src/domain");

/** "file:name" → why it may stay. A stale entry (nothing by that name there) fails too. */
const ALLOWED: Record<string, string> = {
  "glob/compile.ts:cache": "a bounded LRU of compileGlob, a pure function of (pattern, case folding)",
  "glob/compile.ts:automata": "a WeakMap from a compiled glob to its automaton, built with it once and never changed",
  "glob/segments.ts:ranges": "a WeakMap memo of slashRange, a pure function of an automaton",
  "glob/walk.ts:tables": "a WeakMap from an automaton to a bounded table of the state lists a forced head walks it through and, per list, what lies below a literal there (below.ts): pure functions of (automaton, list, character) and (automaton, list, search limits)",
  "glob/case-fold.ts:table": "the fold table, built on first use from the runtime's Unicode tables: the same for every kernel",
};

const COLLECTIONS = new Set(["Map", "Set", "WeakMap", "WeakSet", "Array"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

const hasModifier = (node: ts.Node, kind: ts.SyntaxKind) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

/** Every top-level mutable declaration of a module's source, by name. */
function mutableState(file: string, text = readFileSync(file, "utf8")): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  // Type aliases of this file that are readonly (`type CharSet = readonly number[]`).
  const readonlyAliases = new Set<string>();
  for (const s of sf.statements) {
    if (ts.isTypeAliasDeclaration(s) && ts.isTypeOperatorNode(s.type) && s.type.operator === ts.SyntaxKind.ReadonlyKeyword) readonlyAliases.add(s.name.text);
  }
  const readonlyType = (t: ts.TypeNode | undefined): boolean => {
    if (!t) return false;
    if (ts.isTypeOperatorNode(t)) return t.operator === ts.SyntaxKind.ReadonlyKeyword;
    if (ts.isTypeReferenceNode(t)) return /^Readonly/.test(t.typeName.getText(sf)) || readonlyAliases.has(t.typeName.getText(sf));
    return false;
  };
  const found: string[] = [];
  for (const s of sf.statements) {
    if (ts.isVariableStatement(s)) {
      const isConst = (s.declarationList.flags & ts.NodeFlags.Const) !== 0;
      for (const d of s.declarationList.declarations) {
        const name = d.name.getText(sf);
        if (!isConst) {
          found.push(name);
          continue;
        }
        let init = d.initializer;
        let asConst = false;
        while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init))) {
          if (ts.isAsExpression(init) && init.type.getText(sf) === "const") asConst = true;
          init = init.expression;
        }
        if (!init) continue;
        if (ts.isNewExpression(init) && ts.isIdentifier(init.expression) && COLLECTIONS.has(init.expression.text)) found.push(name);
        else if (ts.isArrayLiteralExpression(init) && !asConst && !readonlyType(d.type)) found.push(name);
      }
    } else if (ts.isClassDeclaration(s)) {
      for (const m of s.members) {
        if (ts.isPropertyDeclaration(m) && hasModifier(m, ts.SyntaxKind.StaticKeyword) && !hasModifier(m, ts.SyntaxKind.ReadonlyKeyword)) {
          found.push(`${s.name?.text ?? "class"}.${m.name.getText(sf)}`);
        }
      }
    }
  }
  return found;
}

describe("module-level state in src/domain", () => {
  test("there is none, but for the memo caches of pure functions allowed by name", () => {
    const found = sources(DOMAIN).flatMap((f) => mutableState(f).map((name) => `${relative(DOMAIN, f)}:${name}`));
    expect(found.filter((k) => !(k in ALLOWED))).toEqual([]);
    // Each exception still exists: one removed from the code leaves the list too.
    expect(Object.keys(ALLOWED).filter((k) => !found.includes(k))).toEqual([]);
  });

  test("the rule sees each kind of state it names, and passes what is constant", () => {
    const text = [
      "let last = 0;",
      "var shared;",
      "const byName = new Map<string, number>();",
      "export const seen = new Set();",
      "const answers = [];",
      "type Codes = readonly number[];",
      "const CODES: Codes = [1, 2];",
      "const NAMES: readonly string[] = ['a'];",
      "const PAIR = [1, 2] as const;",
      "const LIMIT = 50;",
      "function f() { let local = 0; const m = new Map(); return [local, m]; }",
      "class Held { static count = 0; static readonly MAX = 3; private mine = new Map(); }",
    ].join("\n");
    expect(mutableState("fixture.ts", text).sort()).toEqual(["Held.count", "answers", "byName", "last", "seen", "shared"]);
  });
});

describe("two kernels in one process", () => {
  async function kernelWithQueue() {
    const store = openStore(":memory:");
    const kernel = await createKernel({ store, clock: new ManualClock() });
    const q = kernel.ctx.waitQueue<string, string>("test", 0);
    return { kernel, store, q };
  }

  test("number their waiters each from one, and count their own hand-offs", async () => {
    const a = await kernelWithQueue();
    const b = await kernelWithQueue();
    try {
      // Waiters made in a kernel created before these (other tests) do not show here either.
      expect([a.q.enqueue("r", "a1").order, a.q.enqueue("r", "a2").order]).toEqual([1, 2]);
      const b1 = b.q.enqueue("r", "b1");
      expect(b1.order).toBe(1);
      const call = track(b.q.block(b1, b.kernel.clock.now() + 60_000));
      b.store.tx(function* () {
        b.q.grant(b1, "yours");
      });
      await flush();
      expect(call.value).toEqual({ kind: "granted", value: "yours" });
      expect(b.kernel.ctx.sequences.handOffs).toBe(1);
      expect(a.kernel.ctx.sequences.handOffs).toBe(0);
    } finally {
      for (const k of [a, b]) {
        k.q.clear();
        k.kernel.close();
      }
      await flush();
      a.store.close();
      b.store.close();
    }
  });
});
