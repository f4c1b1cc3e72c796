// CI's last line (.ci/count.ts): "N passed, N failed" counted from bun's JUnit reports, and just
// above it every failure named, so the end of CI's output says what to look at. Real runs of
// `bun test` on small fixture suites make the reports and logs it reads.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

setDefaultTimeout(30_000);

const ROOT = resolve(import.meta.dir, "../..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `bun test` on the given files in a fresh folder (no preload, no bunfig), as CI does: its report and log, and exit code. */
function suite(files: Record<string, string>): { xml: string; rc: number } {
  const dir = mkdtempSync(join(tmpdir(), "airlock-ci-count-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const xml = join(dir, "run.xml");
  const p = Bun.spawnSync([process.execPath, "test", `--reporter=junit`, `--reporter-outfile=${xml}`], { cwd: dir, env: { ...process.env, NO_COLOR: "1" } });
  writeFileSync(join(dir, "run.log"), `${p.stdout.toString()}${p.stderr.toString()}`);
  return { xml, rc: p.exitCode ?? 1 };
}

function count(...runs: string[]): { lines: string[]; code: number } {
  const p = Bun.spawnSync([process.execPath, join(ROOT, ".ci/count.ts"), ...runs]);
  return { lines: p.stdout.toString().trimEnd().split("\n"), code: p.exitCode ?? 1 };
}

const HEAD = 'import { test, expect } from "bun:test";\n';

describe(".ci/count.ts", () => {
  test("all passing: the count alone, exit 0", () => {
    const r = suite({ "a.test.ts": `${HEAD}test("one", () => expect(1).toBe(1));\ntest("two", () => { console.log(" 7 errors"); expect(2).toBe(2); });\n` });
    expect(r.rc).toBe(0);
    expect(count(`${r.xml}:${r.rc}`)).toEqual({ lines: ["2 passed, 0 failed"], code: 0 });
  });

  test("a failing case is named above the count; a file that fails to load counts too, beside it", () => {
    const r = suite({
      "a.test.ts": `${HEAD}test("fine", () => expect(1).toBe(1));\ntest("broken & named", () => expect(1).toBe(2));\n`,
      "b.test.ts": 'throw new Error("load boom");\n',
    });
    expect(r.rc).not.toBe(0);
    const { lines, code } = count(`${r.xml}:${r.rc}`);
    expect(code).toBe(1);
    expect(lines.at(-1)).toBe("1 passed, 2 failed");
    expect(lines.some((l) => l.startsWith("ci: FAILED ") && l.includes("a.test.ts > broken & named: expect(received).toBe(expected)"))).toBe(true);
    expect(lines.some((l) => /1 error\(s\) outside any test case/.test(l))).toBe(true);
    expect(lines.some((l) => l.includes("load boom"))).toBe(true);
  });

  test("a run that exited badly with no failing case, and a missing report, each count as one, with why", () => {
    const r = suite({ "a.test.ts": `${HEAD}test("fine", () => expect(1).toBe(1));\n` });
    const { lines, code } = count(`${r.xml}:139`, `${join(tmpdir(), "airlock-ci-count-none", "gone.xml")}:1`);
    expect(code).toBe(1);
    expect(lines.at(-1)).toBe("1 passed, 2 failed");
    expect(lines.some((l) => l.includes("the run exited 139 with no failing test case"))).toBe(true);
    expect(lines.some((l) => l.includes("no report at") && l.includes("gone.xml (exit 1)"))).toBe(true);
  });
});
