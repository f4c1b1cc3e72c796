// The cgroup limits this process actually runs under. A container or a systemd slice can give
// a process far fewer CPUs and far less memory than the machine has, and a pool sized from the
// machine's totals would then overcommit the cgroup. Reads v1, v2 and hybrid layouts.
import { posix } from "node:path";
import { readNumber, readText } from "./files.ts";
import { type Pressure, type PressureKind, readPressure } from "./pressure.ts";

export type CgroupVersion = "v1" | "v2" | "hybrid" | "none";

export interface CgroupFacts {
  version: CgroupVersion;
  /** The process's cgroup (of the memory controller where they differ). */
  path?: string;
  /** CPU bandwidth quota in CPUs (1.5 = one and a half CPUs' worth of time). */
  cpuQuotaCpus?: number;
  memoryLimitBytes?: number;
  /** Usage charged against the limit (or the process's own cgroup when there is none). */
  memoryUsedBytes?: number;
  /** The cgroup's own PSI, v2 only; callers fall back to /proc/pressure. */
  pressure?: Partial<Record<PressureKind, Pressure>>;
}

// v1 reports "no limit" as the largest page-aligned signed 64-bit value (9223372036854771712
// with 4 KiB pages, a little less with larger pages); anything past 2^62 bytes is that.
const V1_UNLIMITED = 2 ** 62;

// v1 superblock options mix controller names with mount options (xattr, release_agent=...,
// clone_children); only these name controllers.
const V1_CONTROLLERS = new Set(["cpu", "cpuacct", "cpuset", "memory", "blkio", "io", "devices", "freezer", "net_cls", "net_prio", "perf_event", "hugetlb", "pids", "rdma", "misc"]);

interface Mount {
  /** The directory of the cgroup filesystem that is mounted (not "/" inside some containers). */
  root: string;
  point: string;
  v2: boolean;
  controllers: string[];
}

interface Membership {
  id: string;
  controllers: string[];
  path: string;
}

// mountinfo escapes space, tab, newline and backslash in paths as octal (\040).
const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

/** The cgroup mounts in a /proc/<pid>/mountinfo text. */
export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split("\n")) {
    const sep = line.indexOf(" - "); // optional fields come before it, so count from both ends
    if (sep < 0) continue;
    const left = line.slice(0, sep).split(" ");
    const [fsType, , superOpts = ""] = line.slice(sep + 3).split(" ");
    if ((fsType !== "cgroup" && fsType !== "cgroup2") || left.length < 5) continue;
    mounts.push({
      root: unescape(left[3]!),
      point: unescape(left[4]!),
      v2: fsType === "cgroup2",
      controllers: fsType === "cgroup" ? superOpts.split(",").filter((o) => V1_CONTROLLERS.has(o)) : [],
    });
  }
  return mounts;
}

/** The hierarchies a /proc/<pid>/cgroup text lists ("4:cpu,cpuacct:/docker/abc", "0::/"). */
export function parseProcCgroup(text: string): Membership[] {
  const out: Membership[] = [];
  for (const line of text.split("\n")) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (m) out.push({ id: m[1]!, controllers: m[2] ? m[2].split(",") : [], path: m[3]! });
  }
  return out;
}

const isController = (c: string) => V1_CONTROLLERS.has(c);

/** The process's directory in one hierarchy, then each ancestor up to the mount point. */
function dirsFor(mount: Mount, member: Membership | undefined): string[] {
  let rel = member?.path ?? "/";
  // Without a cgroup namespace a container sees its own cgroup as the mount root: strip it.
  if (mount.root !== "/" && (rel === mount.root || rel.startsWith(`${mount.root}/`))) rel = rel.slice(mount.root.length);
  const under = (dir: string) => dir === mount.point || dir.startsWith(`${mount.point}/`);
  const own = posix.resolve(mount.point, `.${rel}`);
  // A path outside the mount ("/../x" from another cgroup namespace): only the mount root is ours to read.
  if (!under(own)) return [mount.point];
  const dirs = [own];
  while (dirs.at(-1) !== mount.point) dirs.push(posix.dirname(dirs.at(-1)!));
  return dirs;
}

interface Located {
  v2: boolean;
  dirs: string[];
  member: Membership | undefined;
}

/** Where a controller's files are (the unified hierarchy without one): a v1 hierarchy that has it, else v2. */
function locate(mounts: Mount[], members: Membership[], controller?: string): Located | undefined {
  const v1 = controller === undefined ? undefined : mounts.find((m) => !m.v2 && m.controllers.includes(controller));
  const mount = v1 ?? mounts.find((m) => m.v2);
  if (!mount) return undefined;
  const member = v1 ? members.find((m) => m.controllers.includes(controller!)) : members.find((m) => m.id === "0");
  return { v2: mount.v2, dirs: dirsFor(mount, member), member };
}

function cpuQuota(root: string, dir: string, v2: boolean): number | undefined {
  if (v2) {
    const [quota, period] = (readText(root, `${dir}/cpu.max`) ?? "").trim().split(/\s+/).map(Number);
    return quota !== undefined && period && quota > 0 ? quota / period : undefined; // "max 100000": NaN, no quota
  }
  const quota = readNumber(root, `${dir}/cpu.cfs_quota_us`);
  const period = readNumber(root, `${dir}/cpu.cfs_period_us`);
  return quota !== undefined && period && quota > 0 ? quota / period : undefined; // -1: no quota
}

function memoryLimit(root: string, dir: string, v2: boolean): number | undefined {
  const limit = readNumber(root, `${dir}/${v2 ? "memory.max" : "memory.limit_in_bytes"}`); // "max": undefined
  return limit !== undefined && limit < V1_UNLIMITED ? limit : undefined;
}

const memoryCurrent = (root: string, dir: string, v2: boolean) => readNumber(root, `${dir}/${v2 ? "memory.current" : "memory.usage_in_bytes"}`);

/** The cgroup facts of the process whose /proc/self is under root. */
export function readCgroup(root = "/"): CgroupFacts {
  const mountText = readText(root, "proc/self/mountinfo");
  const mounts = mountText === undefined ? [] : parseMountinfo(mountText);
  const members = parseProcCgroup(readText(root, "proc/self/cgroup") ?? "");
  // A kernel lists the unified hierarchy in /proc/self/cgroup once it was ever mounted anywhere,
  // so the mounts decide; the membership list is the fallback when no cgroupfs is visible.
  const hasV1 = mounts.length ? mounts.some((m) => !m.v2 && m.controllers.some(isController)) : members.some((m) => m.controllers.some(isController));
  const hasV2 = mounts.length ? mounts.some((m) => m.v2) : members.some((m) => m.id === "0");
  const version: CgroupVersion = hasV1 ? (hasV2 ? "hybrid" : "v1") : hasV2 ? "v2" : "none";
  if (version === "none") return { version };

  // A limit set on an ancestor (a systemd slice, say) binds its descendants too, so the
  // effective limit is the tightest one from the process's own cgroup up to the mount root.
  const facts: CgroupFacts = { version };
  const cpu = locate(mounts, members, "cpu");
  for (const dir of cpu?.dirs ?? []) {
    const q = cpuQuota(root, dir, cpu!.v2);
    if (q !== undefined && (facts.cpuQuotaCpus === undefined || q < facts.cpuQuotaCpus)) facts.cpuQuotaCpus = q;
  }
  const mem = locate(mounts, members, "memory");
  let limitDir: string | undefined;
  for (const dir of mem?.dirs ?? []) {
    const l = memoryLimit(root, dir, mem!.v2);
    if (l !== undefined && (facts.memoryLimitBytes === undefined || l < facts.memoryLimitBytes)) [facts.memoryLimitBytes, limitDir] = [l, dir];
  }
  if (mem) {
    const used = [limitDir, ...mem.dirs].map((d) => (d === undefined ? undefined : memoryCurrent(root, d, mem.v2))).find((n) => n !== undefined);
    if (used !== undefined) facts.memoryUsedBytes = used;
  }
  const path = (mem ?? cpu)?.member?.path ?? members.find((m) => m.id === "0")?.path;
  if (path !== undefined) facts.path = path;

  const unified = locate(mounts, members);
  if (unified) {
    const own = unified.dirs[0]!;
    const pressure: CgroupFacts["pressure"] = {};
    for (const kind of ["cpu", "memory", "io"] as const) {
      const p = readPressure(root, [`${own}/${kind}.pressure`]);
      if (p) pressure[kind] = p;
    }
    if (Object.keys(pressure).length) facts.pressure = pressure;
  }
  return facts;
}
