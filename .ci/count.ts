// Counts passed and failed tests from bun's JUnit reports and prints "N passed, N failed".
// A run that exited non-zero without a failing test case (a file that failed to load, an
// unhandled error between tests) counts as one failure, so nothing can fail silently.
import { existsSync, readFileSync } from "node:fs";

let passed = 0;
let failed = 0;
for (const spec of process.argv.slice(2)) {
  const [file, rcText] = spec.split(":") as [string, string];
  const rc = Number(rcText);
  if (!existsSync(file)) {
    console.error(`ci: no report at ${file} (exit ${rc})`);
    failed += 1;
    continue;
  }
  const xml = readFileSync(file, "utf8");
  const root = /<testsuites\b[^>]*>/.exec(xml)?.[0] ?? "";
  const attr = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(root)?.[1] ?? 0);
  const tests = attr("tests");
  const failures = attr("failures") + attr("errors");
  const skipped = attr("skipped");
  passed += tests - failures - skipped;
  failed += failures;
  if (rc !== 0 && failures === 0) {
    console.error(`ci: ${file}: the run exited ${rc} with no failing test case`);
    failed += 1;
  }
  if (tests === 0) {
    console.error(`ci: ${file}: no test ran`);
    failed += 1;
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
