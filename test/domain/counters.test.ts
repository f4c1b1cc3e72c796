import { describe, expect, test } from "bun:test";
import { useKernel } from "../helpers/kernel.ts";

const t = useKernel();

const inc = (name: string, by = 1) => t.kernel.counters.increment(name, by);

describe("Counters", () => {
  test("start at zero and return the value after adding", () => {
    expect([inc("c"), inc("c"), inc("c", 10)]).toEqual([1, 2, 12]);
    expect(t.kernel.counters.get("c")).toBe(12);
  });

  test("counters are independent by name", () => {
    inc("a", 5);
    expect(inc("b")).toBe(1);
    expect(t.kernel.counters.get("a")).toBe(5);
  });

  test("by 0 reads the value, creating the counter at 0", () => {
    expect(inc("c", 0)).toBe(0);
    inc("c", 7);
    expect(inc("c", 0)).toBe(7);
  });

  test("a negative by decrements, below zero too", () => {
    inc("c", 3);
    expect(inc("c", -5)).toBe(-2);
    expect(inc("fresh", -1)).toBe(-1);
  });

  test("reaches the edges of the safe-integer range exactly", () => {
    expect(inc("up", Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(inc("down", -Number.MAX_SAFE_INTEGER)).toBe(-Number.MAX_SAFE_INTEGER);
  });

  test("leaving the safe-integer range throws and changes nothing", () => {
    inc("up", Number.MAX_SAFE_INTEGER - 1);
    expect(() => inc("up", 2)).toThrow("exact integer range");
    expect(t.kernel.counters.get("up")).toBe(Number.MAX_SAFE_INTEGER - 1);
    expect(inc("up")).toBe(Number.MAX_SAFE_INTEGER);

    inc("down", -Number.MAX_SAFE_INTEGER);
    expect(() => inc("down", -1)).toThrow("exact integer range");
    expect(t.kernel.counters.get("down")).toBe(-Number.MAX_SAFE_INTEGER);

    expect(() => inc("fresh", Number.MAX_SAFE_INTEGER + 2)).toThrow("exact integer range");
    expect(t.store.q("SELECT * FROM counters WHERE name = 'fresh'").get()).toBeNull();
  });
});
