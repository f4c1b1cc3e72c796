// No source file over 500 lines (issue 17): a file past it holds more than one concern, and the
// next primitive or client grows it further. The folder map in docs/design.md says where each
// concern lives; split by concern, not by line count.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "../../src");
const MAX_LINES = 500;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|css|html)$/.test(e.name) ? [p] : [];
  });
}

function lines(text: string): number {
  if (text === "") return 0;
  return text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
}

test(`every source file in src/ has at most ${MAX_LINES} lines`, () => {
  const files = sources(SRC);
  expect(files.length).toBeGreaterThan(100);
  const over = files.map((f) => ({ file: relative(SRC, f), lines: lines(readFileSync(f, "utf8")) })).filter((f) => f.lines > MAX_LINES);
  expect(over).toEqual([]);
});

test("the line count is the editor's: a final newline ends the last line, it does not start one", () => {
  expect(lines("a\nb\n")).toBe(2);
  expect(lines("a\nb")).toBe(2);
  expect(lines("")).toBe(0);
  expect(lines("a\n".repeat(MAX_LINES + 1))).toBe(MAX_LINES + 1);
});
