// A transaction body (a generator, src/store/tx.ts) called without `yield*` does nothing at all,
// and TypeScript does not object. This check does, with the compiler's own types:
// - a call whose result is a generator, used as a statement (its work dropped);
// - an arrow function whose expression body is a generator where the context expects no
//   generator back (a callback typed `() => void`: the work dropped again);
// - in src/domain/, any use of the store's synchronous API (`.store.q`, `.store.db`): a
//   statement there must be yielded to the driver.
// Usage: bun .ci/check-tx.ts   (exit 1 with file:line for each finding)
import { resolve } from "node:path";
import ts from "typescript";

const root = resolve(import.meta.dir, "..");
const configPath = ts.findConfigFile(root, ts.sys.fileExists, "tsconfig.json")!;
const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
const program = ts.createProgram(config.fileNames, config.options);
const checker = program.getTypeChecker();
const findings: string[] = [];

const isGenerator = (t: ts.Type | undefined): boolean => {
  if (!t) return false;
  if (t.isUnion()) return t.types.some(isGenerator);
  const name = (t.aliasSymbol ?? t.getSymbol())?.getName();
  return name === "Generator" || name === "Tx";
};

function report(node: ts.Node, what: string): void {
  const sf = node.getSourceFile();
  const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart());
  findings.push(`${sf.fileName.slice(root.length + 1)}:${line + 1}:${character + 1}: ${what}: ${node.getText().slice(0, 80)}`);
}

function visit(node: ts.Node, inDomain: boolean): void {
  if (ts.isExpressionStatement(node)) {
    const e = ts.isVoidExpression(node.expression) ? node.expression.expression : node.expression;
    if (ts.isCallExpression(e) && isGenerator(checker.getTypeAtLocation(e))) report(e, "a transaction body called without yield* (it never runs)");
  }
  if (ts.isArrowFunction(node) && !ts.isBlock(node.body) && isGenerator(checker.getTypeAtLocation(node.body))) {
    const sig = checker.getContextualType(node)?.getCallSignatures()[0];
    const expected = sig ? checker.getReturnTypeOfSignature(sig) : undefined;
    if (expected && !isGenerator(expected) && !(expected.flags & ts.TypeFlags.Any) && !(expected.flags & ts.TypeFlags.Unknown)) {
      report(node, "a transaction body returned where the caller expects none (it never runs)");
    }
  }
  if (inDomain && ts.isPropertyAccessExpression(node) && (node.name.text === "q" || node.name.text === "db")) {
    const target = node.expression;
    const isStore = (ts.isPropertyAccessExpression(target) && target.name.text === "store") || (ts.isIdentifier(target) && target.text === "store");
    if (isStore) report(node, "the store's synchronous API in the domain (yield the statement instead)");
  }
  ts.forEachChild(node, (child) => visit(child, inDomain));
}

for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || sf.fileName.includes("/node_modules/")) continue;
  const rel = sf.fileName.slice(root.length + 1);
  if (!/^(src|test|bench|release)\//.test(rel)) continue;
  visit(sf, rel.startsWith("src/domain/"));
}

if (findings.length > 0) {
  console.error(findings.join("\n"));
  console.error(`check-tx: ${findings.length} finding(s)`);
  process.exit(1);
}
console.log("check-tx: every transaction body is yielded or run");
