// Counts passed and failed tests from bun's JUnit reports and prints "N passed, N failed".
// A run that exited non-zero without a failing test case (a file that failed to load, an
// unhandled error between tests, the runner itself crashing) counts as one failure, so nothing
// can fail silently. Just above that last line it names every failure: the failing cases, and
// for a run that failed without one, its exit status and the lines of its log that say why, so
// the end of CI's output (often all a reader gets) tells what to look at.
import { existsSync, readFileSync } from "node:fs";

let passed = 0;
let failed = 0;
const told: string[] = [];

const unescape = (s: string) =>
  s.replace(/&#10;/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");
const attrOf = (tag: string, name: string) => unescape(new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1] ?? "");

/** The lines of a run's log that say why it ended badly, and its last lines. */
function logWhy(log: string): string[] {
  if (!existsSync(log)) return [`  (no log at ${log})`];
  const lines = readFileSync(log, "utf8").split("\n");
  const why = lines.filter((l) => /\berror\b|panic|crash|Segmentation|Unhandled|Killed|signal/i.test(l)).slice(-12);
  return [...why.map((l) => `  | ${l.slice(0, 300)}`), "  last lines:", ...lines.slice(-8).map((l) => `  | ${l.slice(0, 300)}`)];
}

/** The errors bun's summary counts: the lines from the last " N pass" to the "Ran N tests" after it. */
function summaryErrors(log: string): number {
  const lines = log.split("\n");
  const ran = lines.findLastIndex((l) => /^Ran \d+ tests? across/.test(l));
  if (ran < 0) return 0;
  const pass = lines.slice(0, ran).findLastIndex((l) => /^\s*\d+ pass\s*$/.test(l));
  if (pass < 0) return 0;
  const line = lines.slice(pass, ran).find((l) => /^\s*\d+ errors?\s*$/.test(l));
  return line ? Number(/\d+/.exec(line)![0]) : 0;
}

for (const spec of process.argv.slice(2)) {
  const [file, rcText] = spec.split(":") as [string, string];
  const rc = Number(rcText);
  const log = file.replace(/\.xml$/, ".log");
  if (!existsSync(file)) {
    told.push(`ci: no report at ${file} (exit ${rc})`, ...logWhy(log));
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
  // Each failing case: <testcase name=… classname=… file=…> then a <failure message=…> or <error …>.
  for (const m of xml.matchAll(/<testcase\b([^>]*)>\s*<(failure|error)\b([^>]*)>/g)) {
    const where = [attrOf(m[1]!, "file"), attrOf(m[1]!, "classname"), attrOf(m[1]!, "name")].filter(Boolean).join(" > ");
    told.push(`ci: FAILED ${file}: ${where}: ${attrOf(m[3]!, "message").slice(0, 300)}`);
  }
  // Errors outside any case (a file that failed to load) are not in the report; bun's summary
  // at the end of the log counts them (" 1 error"): its last such line, not a test's output.
  const errors = summaryErrors(existsSync(log) ? readFileSync(log, "utf8") : "");
  if (errors > 0) {
    told.push(`ci: ${file}: ${errors} error(s) outside any test case; its log (${log}):`, ...logWhy(log));
    failed += errors;
  } else if (rc !== 0 && failures === 0) {
    told.push(`ci: ${file}: the run exited ${rc} with no failing test case; its log (${log}):`, ...logWhy(log));
    failed += 1;
  }
  if (tests === 0) {
    told.push(`ci: ${file}: no test ran`);
    failed += 1;
  }
}
for (const line of told) console.log(line);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
