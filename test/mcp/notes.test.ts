// Notes and counters over the wire: set_note, get_note, list_notes, delete_note, set_note_if,
// increment_counter.
import { describe, expect, test } from "bun:test";
import { makeApp } from "./rpc.ts";

describe("set_note and get_note", () => {
  test("set_note answers {saved:true} and get_note reads key and value only", async () => {
    const a = await makeApp();
    expect(await a.call("set_note", { key: "plan", value: "step 1" })).toEqual({ saved: true });
    const n = await a.call("get_note", { key: "plan" });
    expect(n).toEqual({ key: "plan", value: "step 1" });
    expect("author" in n).toBe(false);
    expect("expires_in_seconds" in n).toBe(false);
  });

  test("get_note shows author and expires_in_seconds when they were given", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "k", value: "v", author: "agent:a", ttl_seconds: 60 });
    a.clock.advance(15_000);
    expect(await a.call("get_note", { key: "k" })).toEqual({ key: "k", value: "v", author: "agent:a", expires_in_seconds: 45 });
  });

  test("an absent note answers {found:false}", async () => {
    expect(await (await makeApp()).call("get_note", { key: "nope" })).toEqual({ found: false });
  });

  test("an expired note is gone", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "k", value: "v", ttl_seconds: 5 });
    a.clock.advance(5_000);
    expect(await a.call("get_note", { key: "k" })).toEqual({ found: false });
    expect(await a.call("list_notes")).toEqual([]);
  });

  test("ttl_seconds 0 or negative means no expiry", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "zero", value: "v", ttl_seconds: 0 });
    await a.call("set_note", { key: "neg", value: "v", ttl_seconds: -5 });
    a.clock.advance(365 * 24 * 3600 * 1000);
    expect(await a.call("get_note", { key: "zero" })).toEqual({ key: "zero", value: "v" });
    expect(await a.call("get_note", { key: "neg" })).toEqual({ key: "neg", value: "v" });
  });

  test("ttl_minutes works as 60 × seconds and ttl_seconds wins", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "m", value: "v", ttl_minutes: 2 });
    await a.call("set_note", { key: "both", value: "v", ttl_minutes: 2, ttl_seconds: 7.9 });
    expect((await a.call("get_note", { key: "m" })).expires_in_seconds).toBe(120);
    expect((await a.call("get_note", { key: "both" })).expires_in_seconds).toBe(7);
  });

  test("set_note overwrites, dropping an earlier author and expiry", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "k", value: "one", author: "a", ttl_seconds: 10 });
    await a.call("set_note", { key: "k", value: "two" });
    expect(await a.call("get_note", { key: "k" })).toEqual({ key: "k", value: "two" });
  });

  test("an empty value is a value, stored and read back", async () => {
    const a = await makeApp();
    expect(await a.call("set_note", { key: "k", value: "" })).toEqual({ saved: true });
    expect(await a.call("get_note", { key: "k" })).toEqual({ key: "k", value: "" });
  });

  test("value must be a string: JSON in it is text, an object is refused and nothing is written", async () => {
    const a = await makeApp();
    expect(await a.callError("set_note", { key: "k", value: { a: 1 } })).toBe("value must be a string (got an object)");
    expect(await a.callError("set_note", { key: "k", value: 5 })).toBe("value must be a string (got 5)");
    expect(await a.call("list_notes")).toEqual([]);
  });

  test("missing key or value is named", async () => {
    const a = await makeApp();
    expect(await a.callError("set_note", { value: "v" })).toBe("missing key");
    expect(await a.callError("set_note", { key: "", value: "v" })).toBe("missing key");
    expect(await a.callError("set_note", { key: "k" })).toBe("missing value");
    expect(await a.callError("set_note", { key: "k", value: null })).toBe("missing value");
    expect(await a.callError("get_note", {})).toBe("missing key");
    expect(await a.call("list_notes")).toEqual([]);
  });
});

describe("list_notes", () => {
  test("lists live notes by key with the same shape as get_note", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "b", value: "2", author: "x" });
    await a.call("set_note", { key: "a", value: "1" });
    await a.call("set_note", { key: "c", value: "3", ttl_seconds: 10 });
    expect(await a.call("list_notes")).toEqual([
      { key: "a", value: "1" },
      { key: "b", value: "2", author: "x" },
      { key: "c", value: "3", expires_in_seconds: 10 },
    ]);
  });
});

describe("delete_note", () => {
  test("answers deleted:true once, then deleted:false", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "k", value: "v" });
    expect(await a.call("delete_note", { key: "k" })).toEqual({ deleted: true });
    expect(await a.call("delete_note", { key: "k" })).toEqual({ deleted: false });
    expect(await a.call("get_note", { key: "k" })).toEqual({ found: false });
  });

  test("an expired note counts as absent", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "k", value: "v", ttl_seconds: 1 });
    a.clock.advance(1_000);
    expect(await a.call("delete_note", { key: "k" })).toEqual({ deleted: false });
  });

  test("missing key is an error", async () => {
    expect(await (await makeApp()).callError("delete_note", {})).toBe("missing key");
  });
});

describe("set_note_if", () => {
  test("an absent note compares as empty", async () => {
    const a = await makeApp();
    expect(await a.call("set_note_if", { key: "role", expected_value: "x", new_value: "a" })).toEqual({ swapped: false });
    expect(await a.call("get_note", { key: "role" })).toEqual({ found: false });
    expect(await a.call("set_note_if", { key: "role", expected_value: "", new_value: "a" })).toEqual({ swapped: true });
    expect(await a.call("get_note", { key: "role" })).toEqual({ key: "role", value: "a" });
  });

  test("an expired note compares as empty", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "k", value: "old", ttl_seconds: 1 });
    a.clock.advance(1_000);
    expect(await a.call("set_note_if", { key: "k", expected_value: "old", new_value: "x" })).toEqual({ swapped: false });
    expect(await a.call("set_note_if", { key: "k", expected_value: "", new_value: "x" })).toEqual({ swapped: true });
  });

  test("swaps only when the current value matches, with author and ttl", async () => {
    const a = await makeApp();
    await a.call("set_note", { key: "k", value: "1" });
    expect(await a.call("set_note_if", { key: "k", expected_value: "2", new_value: "3" })).toEqual({ swapped: false });
    expect(await a.call("get_note", { key: "k" })).toEqual({ key: "k", value: "1" });
    expect(await a.call("set_note_if", { key: "k", expected_value: "1", new_value: "2", author: "me", ttl_seconds: 30 })).toEqual({ swapped: true });
    expect(await a.call("get_note", { key: "k" })).toEqual({ key: "k", value: "2", author: "me", expires_in_seconds: 30 });
  });

  test("every required argument is named when missing", async () => {
    const a = await makeApp();
    expect(await a.callError("set_note_if", { expected_value: "", new_value: "a" })).toBe("missing key");
    expect(await a.callError("set_note_if", { key: "k", new_value: "a" })).toBe("missing expected_value");
    expect(await a.callError("set_note_if", { key: "k", expected_value: "" })).toBe("missing new_value");
    expect(await a.callError("set_note_if", { key: "k", expected_value: null, new_value: "a" })).toBe("missing expected_value");
    expect(await a.call("list_notes")).toEqual([]);
  });
});

describe("increment_counter", () => {
  test("starts at 0 and adds 1 by default", async () => {
    const a = await makeApp();
    expect(await a.call("increment_counter", { name: "seq" })).toEqual({ value: 1 });
    expect(await a.call("increment_counter", { name: "seq" })).toEqual({ value: 2 });
    expect(await a.call("increment_counter", { name: "other" })).toEqual({ value: 1 });
  });

  test("by 0 reads the current value", async () => {
    const a = await makeApp();
    await a.call("increment_counter", { name: "c", by: 5 });
    expect(await a.call("increment_counter", { name: "c", by: 0 })).toEqual({ value: 5 });
    expect(await a.call("increment_counter", { name: "fresh", by: 0 })).toEqual({ value: 0 });
  });

  test("by may be negative", async () => {
    const a = await makeApp();
    expect(await a.call("increment_counter", { name: "c", by: -3 })).toEqual({ value: -3 });
    expect(await a.call("increment_counter", { name: "c", by: 10 })).toEqual({ value: 7 });
  });

  test("by is truncated toward zero", async () => {
    const a = await makeApp();
    expect(await a.call("increment_counter", { name: "c", by: 2.9 })).toEqual({ value: 2 });
    expect(await a.call("increment_counter", { name: "c", by: -1.9 })).toEqual({ value: 1 });
  });

  test("a non-number by is refused, naming the field, and the counter is unchanged", async () => {
    const a = await makeApp();
    expect(await a.callError("increment_counter", { name: "c", by: "5" })).toBe('by must be a number (got "5")');
    expect(await a.callError("increment_counter", { name: "c", by: true })).toBe("by must be a number (got true)");
    expect(await a.call("increment_counter", { name: "c", by: 0 })).toEqual({ value: 0 });
  });

  test("leaving the exact integer range is refused and the counter is unchanged", async () => {
    const a = await makeApp();
    await a.call("increment_counter", { name: "c", by: Number.MAX_SAFE_INTEGER });
    expect(await a.callError("increment_counter", { name: "c", by: 1 })).toContain("counter c");
    expect(await a.callError("increment_counter", { name: "c", by: 1e300 })).toContain("by must be <=");
    expect(await a.call("increment_counter", { name: "c", by: 0 })).toEqual({ value: Number.MAX_SAFE_INTEGER });
  });

  test("missing name is an error", async () => {
    const a = await makeApp();
    expect(await a.callError("increment_counter", {})).toBe("missing name");
    expect(await a.callError("increment_counter", { name: "" })).toBe("missing name");
  });
});
