import { describe, expect, test } from "bun:test";
import { useKernel } from "../helpers/kernel.ts";

const t = useKernel();

const notes = () => t.kernel.notes;
const rowCount = () => t.store.q<{ n: number }>("SELECT COUNT(*) AS n FROM notes").get()!.n;

describe("Notes", () => {
  test("set then get returns the value, author and no expiry", async () => {
    const now = t.clock.now();
    await notes().set("k", "v", "alice", undefined);
    expect(await notes().get("k")).toEqual({ key: "k", value: "v", author: "alice", updated_at: now, expires_at: null });
  });

  test("set overwrites the value and author", async () => {
    await notes().set("k", "v1", "alice", undefined);
    t.clock.advance(1_000);
    await notes().set("k", "v2", undefined, undefined);
    expect(await notes().get("k")).toMatchObject({ value: "v2", author: null, updated_at: t.clock.now() });
  });

  test("get of a missing key is null", async () => {
    expect(await notes().get("missing")).toBeNull();
  });

  test("list returns live notes ordered by key", async () => {
    await notes().set("b", "2", undefined, undefined);
    await notes().set("a", "1", undefined, undefined);
    await notes().set("c", "3", undefined, 1_000);
    t.clock.advance(1_000);
    expect((await notes().list()).map((n) => [n.key, n.value])).toEqual([
      ["a", "1"],
      ["b", "2"],
    ]);
  });

  test("delete answers whether a live note was there", async () => {
    await notes().set("k", "v", undefined, undefined);
    expect(await notes().delete("k")).toBe(true);
    expect(await notes().get("k")).toBeNull();
    expect(await notes().delete("k")).toBe(false);
  });

  test("a note with a ttl disappears at its exact deadline and its row is reclaimed", async () => {
    await notes().set("k", "v", undefined, 5_000);
    expect((await notes().get("k"))!.expires_at).toBe(t.clock.now() + 5_000);
    t.clock.advance(4_999);
    expect((await notes().get("k"))?.value).toBe("v");
    expect(rowCount()).toBe(1);
    t.clock.advance(1);
    expect(await notes().get("k")).toBeNull();
    expect(rowCount()).toBe(0);
  });

  test("expiring notes are reclaimed each at its own deadline", async () => {
    await notes().set("late", "v", undefined, 9_000);
    await notes().set("early", "v", undefined, 3_000);
    await notes().set("forever", "v", undefined, undefined);
    t.clock.advance(3_000);
    expect(rowCount()).toBe(2);
    t.clock.advance(6_000);
    expect(rowCount()).toBe(1);
    expect((await notes().list()).map((n) => n.key)).toEqual(["forever"]);
  });

  test("a ttl of zero or less means no expiry", async () => {
    await notes().set("zero", "v", undefined, 0);
    await notes().set("negative", "v", undefined, -5_000);
    t.clock.advance(365 * 24 * 3600 * 1000);
    expect((await notes().list()).map((n) => [n.key, n.expires_at])).toEqual([
      ["negative", null],
      ["zero", null],
    ]);
  });

  test("overwriting a note with a longer ttl keeps it past the old deadline", async () => {
    await notes().set("k", "v1", undefined, 1_000);
    await notes().set("k", "v2", undefined, 10_000);
    t.clock.advance(1_000);
    expect((await notes().get("k"))?.value).toBe("v2");
    t.clock.advance(9_000);
    expect(await notes().get("k")).toBeNull();
  });

  test("overwriting a note without a ttl removes its expiry", async () => {
    await notes().set("k", "v1", undefined, 1_000);
    await notes().set("k", "v2", undefined, undefined);
    t.clock.advance(10_000);
    expect((await notes().get("k"))?.value).toBe("v2");
  });

  test("an expired note is not deleted by delete", async () => {
    await notes().set("k", "v", undefined, 1_000);
    t.clock.advance(1_000);
    expect(await notes().delete("k")).toBe(false);
  });
});

describe("Notes swap", () => {
  test("swaps only when the current value equals the expected one", async () => {
    await notes().set("k", "v1", undefined, undefined);
    expect(await notes().swap("k", "wrong", "v2", "bob", undefined)).toBe(false);
    expect((await notes().get("k"))?.value).toBe("v1");
    expect(await notes().swap("k", "v1", "v2", "bob", undefined)).toBe(true);
    expect(await notes().get("k")).toMatchObject({ value: "v2", author: "bob" });
  });

  test("an absent note compares as the empty string", async () => {
    expect(await notes().swap("k", "anything", "v", undefined, undefined)).toBe(false);
    expect(await notes().get("k")).toBeNull();
    expect(await notes().swap("k", "", "v", undefined, undefined)).toBe(true);
    expect((await notes().get("k"))?.value).toBe("v");
    expect(await notes().swap("k", "", "again", undefined, undefined)).toBe(false);
  });

  test("an expired note compares as the empty string", async () => {
    await notes().set("k", "old", undefined, 1_000);
    t.clock.advance(1_000);
    expect(await notes().swap("k", "old", "new", undefined, undefined)).toBe(false);
    expect(await notes().swap("k", "", "new", undefined, undefined)).toBe(true);
    expect((await notes().get("k"))?.value).toBe("new");
  });

  test("a swap can set a ttl on the new value", async () => {
    expect(await notes().swap("k", "", "leased", undefined, 2_000)).toBe(true);
    t.clock.advance(1_999);
    expect((await notes().get("k"))?.value).toBe("leased");
    t.clock.advance(1);
    expect(await notes().get("k")).toBeNull();
  });
});
