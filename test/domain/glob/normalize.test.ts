import { describe, expect, test } from "bun:test";
import { AirlockError } from "../../../src/errors.ts";
import { normalizePattern } from "../../../src/domain/glob/index.ts";

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AirlockError);
    expect((err as AirlockError).code).toBe("invalid_argument");
    return (err as Error).message;
  }
  throw new Error("expected a refusal");
}

describe("normalizePattern", () => {
  test("strips ./, collapses //, drops a trailing / and . segments", () => {
    expect(normalizePattern("./src//./api/")).toBe("src/api");
    expect(normalizePattern("src/api")).toBe("src/api");
    expect(normalizePattern("a/./././b")).toBe("a/b");
  });

  test("leaves glob characters and backslashes as they are", () => {
    expect(normalizePattern("./src/**/\\*.{ts,js}")).toBe("src/**/\\*.{ts,js}");
    expect(normalizePattern("a\\b/[!c]")).toBe("a\\b/[!c]");
  });

  test("refuses .. segments, naming them", () => {
    expect(refusal(() => normalizePattern("src/../etc"))).toBe('paths must not contain ".." segments (got "src/../etc")');
    expect(refusal(() => normalizePattern(".."))).toMatch(/"\.\." segments/);
    expect(normalizePattern("a/..b/c..")).toBe("a/..b/c.."); // only whole segments are `..`
  });

  test("refuses a pattern that is empty once normalized", () => {
    for (const p of ["", ".", "./", "./.", "././"]) expect(refusal(() => normalizePattern(p))).toMatch(/empty/);
  });

  test("makes an absolute path inside an absolute room relative to it", () => {
    expect(normalizePattern("/home/u/repo/src/x.ts", { room: "/home/u/repo" })).toBe("src/x.ts");
    expect(normalizePattern("/home/u/repo/src/**", { room: "/home/u/repo/" })).toBe("src/**");
    expect(normalizePattern("//home/u/./repo//src", { room: "/home/u/repo" })).toBe("src");
    expect(normalizePattern("/x", { room: "/" })).toBe("x");
    expect(normalizePattern("src/x", { room: "/home/u/repo" })).toBe("src/x");
  });

  test("refuses an absolute path outside the room, or in a room that is not a directory", () => {
    expect(refusal(() => normalizePattern("/home/u/other/x", { room: "/home/u/repo" }))).toMatch(/outside the room/);
    expect(refusal(() => normalizePattern("/home/u/repository/x", { room: "/home/u/repo" }))).toMatch(/outside the room/);
    expect(refusal(() => normalizePattern("/src/x", { room: "default" }))).toMatch(/absolute directory/);
    expect(refusal(() => normalizePattern("/src/x"))).toMatch(/absolute directory/);
    expect(refusal(() => normalizePattern("/home/u/repo/", { room: "/home/u/repo" }))).toMatch(/room itself/);
  });
});
