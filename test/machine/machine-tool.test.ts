// inspect_machine on the wire: snake_case keys, optional facts omitted rather than null.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { inspectMachine } from "../../src/machine/inspect.ts";
import type { ToolContext } from "../../src/mcp/tools/define.ts";
import { machineTools, machineWire } from "../../src/mcp/tools/machine.ts";

function keysDeep(value: unknown, out: string[] = []): string[] {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      keysDeep(v, out);
    }
  }
  return out;
}

test("inspect_machine is one read-only tool that takes no arguments", () => {
  expect(machineTools.map((t) => t.name)).toEqual(["inspect_machine"]);
  expect(machineTools[0]!.readOnly).toBe(true);
  expect(machineTools[0]!.description).toContain("configure_pool");
});

test("answers this machine's facts in snake_case, with no null anywhere", () => {
  const out = machineTools[0]!.run({}, {} as ToolContext) as Record<string, any>;
  expect(out.platform).toBe(process.platform);
  expect(out.cpus).toBeGreaterThanOrEqual(1);
  expect(["v1", "v2", "hybrid", "none"]).toContain(out.cgroup.version);
  expect(Object.keys(out.memory).sort()).toEqual(["available_bytes", "total_bytes", "used_bytes"]);
  expect(out.load_average).toHaveLength(3);
  expect(out.suggested_capacity).toBeGreaterThanOrEqual(1);
  expect(typeof out.rationale).toBe("string");
  for (const k of keysDeep(out)) expect(k).toMatch(/^[a-z0-9_]+$/);
  expect(JSON.stringify(out)).not.toContain("null");
});

test("maps every fact of a full fixture onto its wire name", () => {
  const facts = inspectMachine({ root: join(import.meta.dir, "fixtures", "cgroup-v1") });
  expect(machineWire(facts) as unknown).toEqual({
    platform: "linux",
    cpus: 8,
    cgroup: { version: "v1", cpu_quota_cpus: 1.5, memory_limit_bytes: 6 * 1024 ** 3, memory_used_bytes: 3 * 1024 ** 3, path: "/build.slice/job-7.scope" },
    memory: { total_bytes: 16318448 * 1024, available_bytes: 9876544 * 1024, used_bytes: (16318448 - 9876544) * 1024 },
    load_average: [2.15, 1.8, 1.42],
    pressure: {
      cpu: { some_avg10: 12.5, some_avg60: 8.25, some_avg300: 4.1 },
      memory: { some_avg10: 1, some_avg60: 0.5, some_avg300: 0.25, full_avg10: 0.4, full_avg60: 0.2, full_avg300: 0.1 },
      io: { some_avg10: 3.3, some_avg60: 2.2, some_avg300: 1.1, full_avg10: 2, full_avg60: 1, full_avg300: 0.5 },
    },
    suggested_capacity: 1,
    rationale: facts.rationale,
  });
});

test("omits the facts a machine does not have", () => {
  const out: unknown = machineWire(inspectMachine({ root: join(import.meta.dir, "fixtures", "nothing-here") }));
  expect(out).toEqual({ platform: "linux", cgroup: { version: "none" }, suggested_capacity: 1, rationale: "CPUs and memory unknown: 1, the safe default" });
});
