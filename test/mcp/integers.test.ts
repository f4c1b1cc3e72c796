// Every integer argument of every tool, generated from the catalogue (a new tool is covered
// without being listed here): a v2 integer's or a duration's fraction is truncated toward zero,
// as v2 did, and any other integer's fraction is refused with a message naming the field and the rule, changing
// nothing. A string is never a number. The rule lives in src/mcp/tools/args.ts; docs/decisions.md
// ("Integers") says which argument is which.
import { describe, expect, test } from "bun:test";
import type * as v from "valibot";
import { statusSnapshot } from "../../src/domain/snapshot.ts";
import { integerClass } from "../../src/mcp/tools/args.ts";
import type { Tool } from "../../src/mcp/tools/define.ts";
import { TOOLS } from "../../src/mcp/tools/index.ts";
import { makeApp, type TestApp } from "./rpc.ts";

type Entries = Record<string, v.GenericSchema & { pipe?: readonly { type: string; requirement?: unknown }[] }>;

/** v2's integers and the durations: the only integer arguments whose fraction is truncated (docs/decisions.md). */
const TRUNCATED = ["by", "id", "last_seen_generation", "lease_seconds", "offer_seconds", "priority", "ttl_minutes", "ttl_seconds", "wait_seconds"];

const entriesOf = (t: Tool) => t.args.entries as unknown as Entries;
const unwrap = (s: Entries[string]): Entries[string] => (s.type === "optional" ? (s as unknown as { wrapped: Entries[string] }).wrapped : s);

/** A valid value for a required argument, from its schema alone. */
function sample(s: Entries[string]): unknown {
  const inner = unwrap(s);
  if (integerClass(inner) !== undefined) {
    const min = inner.pipe?.find((a) => a.type === "min_value")?.requirement;
    return typeof min === "number" && min > -1000 ? Math.max(min, 0) : 1;
  }
  if (inner.type === "array") return ["x"];
  if (inner.type === "boolean") return true;
  return "x";
}

/** Each tool's required arguments, each with a valid value. */
function base(t: Tool): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(entriesOf(t))) if (s.type !== "optional") out[k] = sample(s);
  // A blocking tool answers at once (its wait is not what these cases are about).
  if ("wait_seconds" in entriesOf(t)) out.wait_seconds = 0;
  return out;
}

/** Everything a call could change: the whole status (the journal's revision included). */
const everything = async (a: TestApp) => JSON.stringify(await statusSnapshot(a.kernel));

/** A result with its random capabilities masked, to compare two calls on two fresh daemons. */
async function outcome(name: string, args: Record<string, unknown>): Promise<string> {
  const r = await (await makeApp()).callRaw(name, args);
  return JSON.stringify({ isError: r.isError ?? false, text: r.content[0]!.text.replace(/[0-9a-f]{32}/g, "<token>") });
}

const integers = TOOLS.flatMap((t) =>
  Object.entries(entriesOf(t)).flatMap(([field, s]) => {
    const cls = integerClass(s);
    return cls === undefined ? [] : [{ tool: t, field, cls, clamped: field === "wait_seconds" }];
  }),
);

test("every number argument of every tool is an integer of a declared class", () => {
  const numbers = TOOLS.flatMap((t) => Object.entries(entriesOf(t)).filter(([, s]) => unwrap(s).type === "number").map(([f]) => `${t.name}.${f}`));
  expect(numbers.length).toBeGreaterThan(20);
  expect(integers.map((i) => `${i.tool.name}.${i.field}`)).toEqual(numbers);
});

test("only v2's integers and the durations truncate; every other integer must be whole", () => {
  expect([...new Set(integers.filter((i) => i.cls === "truncated").map((i) => i.field))].sort()).toEqual(TRUNCATED);
  for (const field of ["weight", "capacity", "pid", "expected_version", "since_revision", "max_attempts", "limit"]) {
    expect(integers.filter((i) => i.field === field).map((i) => i.cls)).toContain("whole");
    expect(integers.filter((i) => i.field === field && i.cls !== "whole")).toEqual([]);
  }
});

for (const { tool, field, cls, clamped } of integers) {
  describe(`${tool.name}.${field} (${cls})`, () => {
    if (cls === "whole") {
      test("a fraction is refused, naming the field and the rule, and changes nothing", async () => {
        const a = await makeApp();
        const before = await everything(a);
        expect(await a.callError(tool.name, { ...base(tool), [field]: 1.5 })).toBe(`${field} must be a whole number (got 1.5)`);
        expect(await a.callError(tool.name, { ...base(tool), [field]: -2.25 })).toBe(`${field} must be a whole number (got -2.25)`);
        expect(await everything(a)).toBe(before);
      });
    } else {
      // wait_seconds is also clamped into 0..50: 0.9 is 0 (and blocks nobody); others 60.5 is 60.
      const [fraction, whole] = clamped ? [0.9, 0] : [60.5, 60];
      test(`a fraction is truncated toward zero, as v2 did: ${fraction} answers exactly as ${whole}`, async () => {
        const got = await outcome(tool.name, { ...base(tool), [field]: fraction });
        expect(got).not.toContain(`${field} must`);
        expect(got).toBe(await outcome(tool.name, { ...base(tool), [field]: whole }));
      });
    }

    test('a string is not a number: "5" is refused, naming the field, and changes nothing', async () => {
      const a = await makeApp();
      const before = await everything(a);
      expect(await a.callError(tool.name, { ...base(tool), [field]: "5" })).toBe(`${field} must be a number (got "5")`);
      expect(await everything(a)).toBe(before);
    });
  });
}

test("on the wire: ttl_seconds 1.5 is a one-second lock (v2), weight 1.5 and capacity 1.5 are refused", async () => {
  const a = await makeApp();
  expect(await a.call("lock_resource", { name: "r", agent_id: "a", ttl_seconds: 1.5 })).toMatchObject({ locked: true, expires_in_seconds: 1 });
  expect(await a.callError("acquire_slot", { agent_id: "a", weight: 1.5 })).toBe("weight must be a whole number (got 1.5)");
  const pools = JSON.stringify(await a.call("list_pools"));
  expect(await a.callError("configure_pool", { pool: "heavy", capacity: 1.5, expected_version: 1, author: "a", reason: "r" })).toBe(
    "capacity must be a whole number (got 1.5)",
  );
  expect(JSON.stringify(await a.call("list_pools"))).toBe(pools);
});

test("acquire_slot with its wake_token and no weight keeps the queued weight; a different weight is refused", async () => {
  const a = await makeApp();
  await a.call("configure_pool", { pool: "heavy", capacity: 2, expected_version: 1, author: "a", reason: "r" });
  const held = await a.call("acquire_slot", { agent_id: "h", weight: 2 });
  const q = await a.call("acquire_slot", { agent_id: "b", weight: 2 });
  expect(q).toMatchObject({ granted: false, queue_position: 1 });
  const before = await everything(a);
  expect(await a.callError("acquire_slot", { agent_id: "b", wake_token: q.wake_token, weight: 1 })).toStartWith(
    "weight must be the weight your queued request asked for (2) when the call resumes it (got 1)",
  );
  expect(await everything(a)).toBe(before);
  expect(await a.call("release_slot", { slot_token: held.slot_token })).toEqual({ released: true });
  expect(await a.call("acquire_slot", { agent_id: "b", wake_token: q.wake_token })).toMatchObject({ granted: true, weight: 2 });
});
