// Machine facts from fixture roots laid out like real machines (v1, v2, hybrid, a v1 container,
// no cgroups at all), and from this machine itself.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parseMountinfo, parseProcCgroup, readCgroup } from "../../src/machine/cgroup.ts";
import { countCpuList, inspectMachine } from "../../src/machine/inspect.ts";
import { parsePressure } from "../../src/machine/pressure.ts";

const fixture = (name: string) => join(import.meta.dir, "fixtures", name);
const GiB = 1024 ** 3;
const psi = (avg10: number, avg60: number, avg300: number) => ({ avg10, avg60, avg300 });

describe("a fixture machine", () => {
  test("on cgroup v1 takes the tightest quota and limit from its scope up to the hierarchy root", () => {
    expect(inspectMachine({ root: fixture("cgroup-v1") })).toEqual({
      platform: "linux",
      cpus: 8, // proc/cpuinfo
      // job-7.scope's 150000/100000 beats build.slice's 300000/100000; build.slice's 6 GiB beats the scope's "unlimited"
      cgroup: { version: "v1", path: "/build.slice/job-7.scope", cpuQuotaCpus: 1.5, memoryLimitBytes: 6 * GiB, memoryUsedBytes: 3 * GiB },
      memory: { totalBytes: 16318448 * 1024, availableBytes: 9876544 * 1024, usedBytes: (16318448 - 9876544) * 1024 },
      loadAverage: [2.15, 1.8, 1.42],
      pressure: {
        cpu: { some: psi(12.5, 8.25, 4.1) }, // no "full" line before Linux 5.13
        memory: { some: psi(1, 0.5, 0.25), full: psi(0.4, 0.2, 0.1) },
        io: { some: psi(3.3, 2.2, 1.1), full: psi(2, 1, 0.5) },
      },
      suggestedCapacity: 1,
      rationale: "1.5 CPUs (cgroup quota of 1.5) / 4 per slot → 1; 3.0 GiB memory available under the cgroup limit / 2 GiB per slot → 1; the smaller is 1",
    });
  });

  test("on cgroup v2 reads the limits of its user slice and the pressure of its own cgroup", () => {
    expect(inspectMachine({ root: fixture("cgroup-v2") })).toEqual({
      platform: "linux",
      cpus: 16, // sys/devices/system/cpu/online "0-15"
      cgroup: {
        version: "v2",
        path: "/user.slice/user-1000.slice/session-3.scope",
        cpuQuotaCpus: 8, // "800000 100000" on user-1000.slice; "max 100000" elsewhere
        memoryLimitBytes: 16 * GiB,
        memoryUsedBytes: 4 * GiB, // memory.current where the limit is
      },
      memory: { totalBytes: 32768000 * 1024, availableBytes: 20480000 * 1024, usedBytes: 12288000 * 1024 },
      loadAverage: [0.52, 0.61, 0.7],
      pressure: {
        // the cgroup's files, not proc/pressure's 99s
        cpu: { some: psi(25, 20, 15), full: psi(5, 4, 3) },
        memory: { some: psi(0.1, 0.2, 0.3), full: psi(0.01, 0.02, 0.03) },
        io: { some: psi(7.5, 6.5, 5.5), full: psi(7, 6, 5) },
      },
      suggestedCapacity: 2,
      rationale: "8 CPUs (cgroup quota of 8) / 4 per slot → 2; 12.0 GiB memory available under the cgroup limit / 2 GiB per slot → 6; the smaller is 2",
    });
  });

  test("on a hybrid layout reads limits from the v1 controllers and pressure from the unified hierarchy", () => {
    expect(inspectMachine({ root: fixture("cgroup-hybrid") })).toEqual({
      platform: "linux",
      cpus: 16, // "0-7,16-23"
      cgroup: {
        version: "hybrid",
        path: "/user.slice/user-1000.slice/user@1000.service",
        cpuQuotaCpus: 5, // 250000 / 50000 on user.slice
        memoryLimitBytes: 4 * GiB,
        memoryUsedBytes: 1.5 * GiB,
      },
      memory: { totalBytes: 8030000 * 1024, availableBytes: 4015000 * 1024, usedBytes: 4015000 * 1024 },
      loadAverage: [6.01, 5.55, 4.98],
      pressure: {
        cpu: { some: psi(40, 30, 20) },
        memory: { some: psi(2, 1.5, 1), full: psi(1, 0.75, 0.5) },
        io: { some: psi(0.5, 0.4, 0.3), full: psi(0.2, 0.1, 0.05) }, // no io.pressure in the cgroup: the machine's
      },
      suggestedCapacity: 1,
      rationale: "5 CPUs (cgroup quota of 5) / 4 per slot → 1; 2.5 GiB memory available under the cgroup limit / 2 GiB per slot → 1; the smaller is 1",
    });
  });

  test("without cgroups or PSI reports cgroup none, omits pressure, and reads MemFree on old kernels", () => {
    expect(inspectMachine({ root: fixture("no-cgroup") })).toEqual({
      platform: "linux",
      cpus: 12,
      cgroup: { version: "none" },
      memory: { totalBytes: 8 * GiB, availableBytes: 5 * GiB, usedBytes: 3 * GiB },
      loadAverage: [0, 0.01, 0.05],
      suggestedCapacity: 2,
      rationale: "12 CPUs (logical) / 4 per slot → 3; 5.0 GiB memory available / 2 GiB per slot → 2; the smaller is 2",
    });
  });

  test("in a v1 container whose cgroup is the mount root reads the limits at the mount point", () => {
    expect(inspectMachine({ root: fixture("cgroup-v1-container") })).toEqual({
      platform: "linux",
      cgroup: { version: "v1", path: "/docker/3f2a9c", cpuQuotaCpus: 2, memoryLimitBytes: GiB, memoryUsedBytes: 0.25 * GiB },
      loadAverage: [1, 1, 1],
      suggestedCapacity: 1,
      rationale: "2 CPUs (cgroup quota of 2) / 4 per slot → 1; 0.8 GiB memory available under the cgroup limit / 2 GiB per slot → 1; the smaller is 1",
    });
  });

  test("that does not exist yields only what needs no file, and never throws", () => {
    expect(inspectMachine({ root: fixture("nothing-here") })).toEqual({
      platform: "linux",
      cgroup: { version: "none" },
      suggestedCapacity: 1,
      rationale: "CPUs and memory unknown: 1, the safe default",
    });
  });
});

describe("this machine", () => {
  test("has CPUs, memory, load averages and a known cgroup version", () => {
    const m = inspectMachine();
    expect(m.platform).toBe(process.platform);
    expect(m.cpus).toBeGreaterThanOrEqual(1);
    expect(m.memory!.totalBytes).toBeGreaterThan(0);
    expect(m.memory!.usedBytes).toBe(m.memory!.totalBytes - m.memory!.availableBytes);
    expect(m.loadAverage).toHaveLength(3);
    for (const n of m.loadAverage!) expect(n).toBeGreaterThanOrEqual(0);
    expect(["v1", "v2", "hybrid", "none"]).toContain(m.cgroup.version);
    expect(Number.isInteger(m.suggestedCapacity) && m.suggestedCapacity >= 1).toBe(true);
    expect(m.rationale).toContain(`→ ${m.suggestedCapacity}`);
  });

  test("agrees with readCgroup about the cgroup", () => {
    // memoryUsedBytes moves between two reads of a live machine; everything else must match.
    const { pressure: _, memoryUsedBytes: _used, ...cgroup } = readCgroup();
    const { memoryUsedBytes: _used2, ...inspected } = inspectMachine().cgroup;
    expect(inspected).toEqual(cgroup);
  });
});

describe("parsing", () => {
  test("counts CPU ranges and single CPUs in an online list", () => {
    expect(countCpuList("0-3\n")).toBe(4);
    expect(countCpuList("0,2-3,8-11")).toBe(7);
    expect(countCpuList("garbage")).toBeUndefined();
    expect(countCpuList("3-1")).toBeUndefined();
  });

  test("reads some and full PSI lines, and nothing from a file without a some line", () => {
    expect(parsePressure("some avg10=1.50 avg60=0.00 avg300=2.25 total=9\n")).toEqual({ some: psi(1.5, 0, 2.25) });
    expect(parsePressure("full avg10=1.00 avg60=1.00 avg300=1.00 total=1")).toBeUndefined();
    expect(parsePressure("")).toBeUndefined();
  });

  test("unescapes mount points and tells v1 controllers from mount options", () => {
    const text =
      "36 31 0:31 /a\\040b /sys/fs/cgroup/cpu\\040x rw,relatime shared:15 master:3 - cgroup cgroup rw,xattr,release_agent=/x,cpu,cpuacct\n" +
      "32 31 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n" +
      "22 27 0:21 / /proc rw,relatime - proc proc rw\n";
    expect(parseMountinfo(text)).toEqual([
      { root: "/a b", point: "/sys/fs/cgroup/cpu x", v2: false, controllers: ["cpu", "cpuacct"] },
      { root: "/", point: "/sys/fs/cgroup/unified", v2: true, controllers: [] },
    ]);
  });

  test("reads the hierarchies a process belongs to, paths with colons included", () => {
    expect(parseProcCgroup("2:cpu,cpuacct:/a:b\n0::/\n")).toEqual([
      { id: "2", controllers: ["cpu", "cpuacct"], path: "/a:b" },
      { id: "0", controllers: [], path: "/" },
    ]);
  });
});
