import { describe, expect, test } from "bun:test";
import { useKernel } from "../helpers/kernel.ts";

const t = useKernel();

const inc = (name: string, by = 1) => t.kernel.counters.increment(name, by);

describe("Counters", () => {
  test("start at zero and return the value after adding", async () => {
    expect([await inc("c"), await inc("c"), await inc("c", 10)]).toEqual([1, 2, 12]);
    expect(await t.kernel.counters.get("c")).toBe(12);
  });

  test("counters are independent by name", async () => {
    await inc("a", 5);
    expect(await inc("b")).toBe(1);
    expect(await t.kernel.counters.get("a")).toBe(5);
  });

  test("by 0 reads the value, creating the counter at 0", async () => {
    expect(await inc("c", 0)).toBe(0);
    await inc("c", 7);
    expect(await inc("c", 0)).toBe(7);
  });

  test("a negative by decrements, below zero too", async () => {
    await inc("c", 3);
    expect(await inc("c", -5)).toBe(-2);
    expect(await inc("fresh", -1)).toBe(-1);
  });

  test("reaches the edges of the safe-integer range exactly", async () => {
    expect(await inc("up", Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(await inc("down", -Number.MAX_SAFE_INTEGER)).toBe(-Number.MAX_SAFE_INTEGER);
  });

  test("leaving the safe-integer range throws and changes nothing", async () => {
    await inc("up", Number.MAX_SAFE_INTEGER - 1);
    await expect(inc("up", 2)).rejects.toThrow("exact integer range");
    expect(await t.kernel.counters.get("up")).toBe(Number.MAX_SAFE_INTEGER - 1);
    expect(await inc("up")).toBe(Number.MAX_SAFE_INTEGER);

    await inc("down", -Number.MAX_SAFE_INTEGER);
    await expect(inc("down", -1)).rejects.toThrow("exact integer range");
    expect(await t.kernel.counters.get("down")).toBe(-Number.MAX_SAFE_INTEGER);

    await expect(inc("fresh", Number.MAX_SAFE_INTEGER + 2)).rejects.toThrow("exact integer range");
    expect(t.store.q("SELECT * FROM counters WHERE name = 'fresh'").get()).toBeNull();
  });

  test("each increment is recorded with the value the row gives it, and a refused one not at all", async () => {
    await inc("j", 3);
    await inc("j", -5);
    await inc("edge", Number.MAX_SAFE_INTEGER);
    await expect(inc("edge", 1)).rejects.toThrow("exact integer range");
    const rows = t.store.q("SELECT resource, data FROM journal WHERE kind = 'counter.changed' ORDER BY revision").all() as { resource: string; data: string }[];
    // The entry's text is the JSON the domain's other entries are (JSON.stringify's).
    expect(rows.map((r) => [r.resource, r.data])).toEqual([
      ["j", JSON.stringify({ value: 3, by: 3 })],
      ["j", JSON.stringify({ value: -2, by: -5 })],
      ["edge", JSON.stringify({ value: Number.MAX_SAFE_INTEGER, by: Number.MAX_SAFE_INTEGER })],
    ]);
  });
});
