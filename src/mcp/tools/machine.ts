// Machine tools: inspect_machine, the facts an agent reads before it sets a pool's capacity.
// The machine layer speaks camelCase; this file is where its answer becomes the wire's snake_case.
import * as v from "valibot";
import { inspectMachine, type MachineFacts } from "../../machine/inspect.ts";
import type { Pressure } from "../../machine/pressure.ts";
import { compact, defineTool } from "./define.ts";

function pressureWire(p: Pressure | undefined) {
  if (!p) return undefined;
  return compact({
    some_avg10: p.some.avg10,
    some_avg60: p.some.avg60,
    some_avg300: p.some.avg300,
    full_avg10: p.full?.avg10,
    full_avg60: p.full?.avg60,
    full_avg300: p.full?.avg300,
  });
}

/** MachineFacts on the wire: snake_case, optional keys omitted rather than null. */
export function machineWire(f: MachineFacts) {
  const pressure = f.pressure && compact({ cpu: pressureWire(f.pressure.cpu), memory: pressureWire(f.pressure.memory), io: pressureWire(f.pressure.io) });
  return compact({
    platform: f.platform,
    cpus: f.cpus,
    cgroup: compact({
      version: f.cgroup.version,
      cpu_quota_cpus: f.cgroup.cpuQuotaCpus,
      memory_limit_bytes: f.cgroup.memoryLimitBytes,
      memory_used_bytes: f.cgroup.memoryUsedBytes,
      path: f.cgroup.path,
    }),
    memory: f.memory && { total_bytes: f.memory.totalBytes, available_bytes: f.memory.availableBytes, used_bytes: f.memory.usedBytes },
    load_average: f.loadAverage,
    pressure,
    suggested_capacity: f.suggestedCapacity,
    rationale: f.rationale,
  });
}

export const machineTools = [
  defineTool({
    name: "inspect_machine",
    title: "Inspect the machine before sizing a pool",
    readOnly: true,
    description:
      "Facts to choose a pool's capacity from: call this before configure_pool. Tells the logical CPUs, the cgroup " +
      "(v1, v2, hybrid or none) with its CPU quota and memory limit where one is set, memory total, available and in " +
      "use, the 1/5/15-minute load averages, and PSI pressure (the percent of time work stalled on cpu, memory or io) " +
      "where the kernel has it. suggested_capacity is a starting point with its rationale (a quarter of the usable " +
      "CPUs, at most one slot per 2 GiB of available memory); lower it when pressure stays high while slots are held.",
    args: v.object({}),
    run() {
      return machineWire(inspectMachine());
    },
  }),
];
