// What an agent needs to know before it sets a pool's capacity (inspect_machine, SPEC §5): how
// many CPUs and how much memory this process can really use (cgroup limits included), and how
// busy the machine is. Facts, plus one suggested capacity whose reasoning is spelled out.
import os from "node:os";
import { resolve } from "node:path";
import { type CgroupFacts, readCgroup } from "./cgroup.ts";
import { readText } from "./files.ts";
import { type Pressure, type PressureKind, readPressure } from "./pressure.ts";

export interface MachineFacts {
  platform: string;
  /** Logical CPUs this process may run on (undefined only for a fixture root without CPU files). */
  cpus?: number;
  cgroup: Omit<CgroupFacts, "pressure">;
  memory?: { totalBytes: number; availableBytes: number; usedBytes: number };
  /** 1, 5 and 15 minute load averages. */
  loadAverage?: [number, number, number];
  pressure?: Partial<Record<PressureKind, Pressure>>;
  /** An integer >= 1. */
  suggestedCapacity: number;
  rationale: string;
}

// A heavy job (a build, a test suite) is itself parallel and will use every core it gets, so
// one slot per core would oversubscribe the CPUs many times over. A quarter of the cores per
// slot lets two or three jobs overlap usefully while leaving room for the agents themselves,
// their editors and language servers.
const CPUS_PER_SLOT = 4;
// Peak resident memory of a typical heavy job: a TypeScript or Rust build, a JVM test run.
// Below this much headroom per slot, parallel jobs start swapping or meet the OOM killer.
const BYTES_PER_SLOT = 2 * 1024 ** 3;

/** Counts the CPUs in a list like "0-3,8,10-11" (sys/devices/system/cpu/online). */
export function countCpuList(list: string): number | undefined {
  let n = 0;
  for (const part of list.trim().split(",")) {
    const [a, b = a] = part.split("-").map(Number);
    if (!Number.isInteger(a) || !Number.isInteger(b) || b! < a!) return undefined;
    n += b! - a! + 1;
  }
  return n || undefined;
}

function readCpus(root: string): number | undefined {
  const online = readText(root, "sys/devices/system/cpu/online");
  const fromList = online === undefined ? undefined : countCpuList(online);
  if (fromList) return fromList;
  const processors = readText(root, "proc/cpuinfo")?.match(/^processor\s*:/gm)?.length;
  return processors || undefined;
}

function readMemory(root: string): MachineFacts["memory"] {
  const info = readText(root, "proc/meminfo");
  if (info === undefined) return undefined;
  const kib = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(info);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const total = kib("MemTotal");
  const available = kib("MemAvailable") ?? kib("MemFree"); // MemAvailable is missing before Linux 3.14
  if (total === undefined || available === undefined) return undefined;
  return { totalBytes: total, availableBytes: available, usedBytes: total - available };
}

function readLoad(root: string): MachineFacts["loadAverage"] {
  const [a, b, c] = (readText(root, "proc/loadavg") ?? "").split(" ").map(Number);
  return [a, b, c].every((n) => n !== undefined && Number.isFinite(n)) ? [a!, b!, c!] : undefined;
}

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
const round = (n: number) => Math.round(n * 100) / 100;

function suggest(cpus: number | undefined, cgroup: CgroupFacts, memory: MachineFacts["memory"]) {
  const reasons: string[] = [];
  let capacity = Number.POSITIVE_INFINITY;
  const quota = cgroup.cpuQuotaCpus;
  const effective = Math.min(cpus ?? Number.POSITIVE_INFINITY, quota ?? Number.POSITIVE_INFINITY);
  if (Number.isFinite(effective)) {
    const byCpu = Math.max(1, Math.floor(effective / CPUS_PER_SLOT));
    const bound = quota !== undefined && quota < (cpus ?? Number.POSITIVE_INFINITY) ? `cgroup quota of ${round(quota)}` : "logical";
    reasons.push(`${round(effective)} CPUs (${bound}) / ${CPUS_PER_SLOT} per slot → ${byCpu}`);
    capacity = byCpu;
  }
  const underLimit = cgroup.memoryLimitBytes === undefined ? undefined : Math.max(0, cgroup.memoryLimitBytes - (cgroup.memoryUsedBytes ?? 0));
  const available = Math.min(memory?.availableBytes ?? Number.POSITIVE_INFINITY, underLimit ?? Number.POSITIVE_INFINITY);
  if (Number.isFinite(available)) {
    const byMemory = Math.max(1, Math.floor(available / BYTES_PER_SLOT));
    const where = underLimit !== undefined && underLimit <= (memory?.availableBytes ?? Number.POSITIVE_INFINITY) ? " under the cgroup limit" : "";
    reasons.push(`${gib(available)} memory available${where} / ${BYTES_PER_SLOT / 1024 ** 3} GiB per slot → ${byMemory}`);
    capacity = Math.min(capacity, byMemory);
  }
  if (!Number.isFinite(capacity)) return { suggestedCapacity: 1, rationale: "CPUs and memory unknown: 1, the safe default" };
  return { suggestedCapacity: capacity, rationale: `${reasons.join("; ")}; the smaller is ${capacity}` };
}

/** Facts about the machine whose filesystem is at root (default "/": this one). */
export function inspectMachine(opts: { root?: string } = {}): MachineFacts {
  const root = opts.root ?? "/";
  // Only the real machine may fall back on os.*: a fixture root answers for itself alone.
  const here = resolve(root) === "/";
  const cpus = here ? os.availableParallelism() : readCpus(root);
  const { pressure: cgroupPressure, ...cgroup } = readCgroup(root);
  const memory = readMemory(root) ?? (here ? { totalBytes: os.totalmem(), availableBytes: os.freemem(), usedBytes: os.totalmem() - os.freemem() } : undefined);
  const loadAverage = readLoad(root) ?? (here ? (os.loadavg() as [number, number, number]) : undefined);
  const pressure: Partial<Record<PressureKind, Pressure>> = {};
  for (const kind of ["cpu", "memory", "io"] as const) {
    // The cgroup's own pressure is what this process's jobs feel; the machine's is the fallback.
    const p = cgroupPressure?.[kind] ?? readPressure(root, [`proc/pressure/${kind}`]);
    if (p) pressure[kind] = p;
  }
  const facts: MachineFacts = {
    platform: here ? process.platform : "linux",
    cpus,
    cgroup,
    memory,
    loadAverage,
    pressure: Object.keys(pressure).length ? pressure : undefined,
    ...suggest(cpus, cgroup, memory),
  };
  for (const key of Object.keys(facts) as (keyof MachineFacts)[]) if (facts[key] === undefined) delete facts[key];
  return facts;
}
