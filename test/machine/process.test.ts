// Process-group liveness against real processes, through both sources: /proc (Linux) and the
// ps fallback that macOS uses, which procps also provides here.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseStat, procTable } from "../../src/machine/proc-stat.ts";
import { bindProcess, groupAlive, groupSize, processUid, type ProcessBinding, type ProcessSource } from "../../src/machine/process.ts";
import { findPs, parsePsLine, psTable } from "../../src/machine/ps.ts";
import { until } from "../helpers/until.ts";

const NO_SUCH_PID = 4194305; // above Linux's PID_MAX_LIMIT (2^22) and macOS's 99999: never a process

const started: Subprocess[] = [];
afterAll(() => {
  if (leaderExits) rmSync(dirname(leaderExits), { recursive: true, force: true });
});
afterEach(() => {
  // Every child here leads its own group (detached), so killing the group ends its children too.
  for (const p of started.splice(0)) {
    try {
      process.kill(-p.pid, "SIGKILL");
    } catch {}
  }
});

/** Runs argv as the leader of a new process group, as `airlock run` would bind it. */
function spawnGroup(argv: string[], stdin: "pipe" | "ignore" = "ignore") {
  const p = Bun.spawn(argv, { detached: true, stdin, stdout: "pipe", stderr: "ignore" });
  started.push(p);
  return p;
}

async function firstLine(p: Subprocess<any, "pipe", any>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of p.stdout) {
    text += decoder.decode(chunk);
    if (text.includes("\n")) break;
  }
  return text.split("\n")[0]!.trim();
}

/** A start time of the same shape as `startTime` but a minute (or 100 ticks) earlier. */
function earlier(source: ProcessSource, startTime: string): string {
  if (source === "proc") {
    const at = startTime.lastIndexOf(":");
    return `${startTime.slice(0, at)}:${Number(startTime.slice(at + 1)) - 100}`;
  }
  const d = new Date(Date.parse(startTime) - 60_000);
  const [dow, mon, day, year] = d.toDateString().split(" ");
  return `${dow} ${mon} ${Number(day)} ${d.toTimeString().slice(0, 8)} ${year}`;
}

const tableOf = (source: ProcessSource) => (source === "proc" ? procTable : psTable());
const isZombie = (source: ProcessSource, pid: number) => tableOf(source).entry(pid)?.zombie === true;

const sources: ProcessSource[] = [];
if (existsSync("/proc/self/stat")) sources.push("proc");
else console.log("skipping the /proc source: this machine has no /proc");
if (findPs()) sources.push("ps");
else console.log("skipping the ps source: no `ps` on PATH");
const hasSetsid = Bun.which("setsid") !== null;
if (!hasSetsid) console.log("skipping the zombie tests: they need `setsid` to give the zombie a group of its own");

// A program whose main thread exits (pthread_exit) while a second thread runs for a second:
// Linux then shows the process as Z though it is alive.
const cc = Bun.which("cc");
if (!cc) console.log("skipping the exited-main-thread tests: no C compiler (cc) to build the program");
let leaderExits: string | undefined;
function leaderExitsProgram(): string {
  if (leaderExits) return leaderExits;
  const dir = mkdtempSync(join(tmpdir(), "airlock-machine-"));
  writeFileSync(join(dir, "main.c"), "#include <pthread.h>\n#include <unistd.h>\nstatic void *run(void *a) { (void)a; sleep(1); return 0; }\nint main(void) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_exit(0); }\n");
  const r = Bun.spawnSync([cc!, "-o", join(dir, "leader-exits"), join(dir, "main.c"), "-lpthread"], { stderr: "pipe" });
  if (!r.success) throw new Error(`cc failed: ${r.stderr.toString()}`);
  return (leaderExits = join(dir, "leader-exits"));
}

describe.each(sources)("with the %s source", (source) => {
  test.if(cc !== null && process.platform === "linux")("counts a process whose main thread exited while another thread runs as alive", async () => {
    const p = spawnGroup([leaderExitsProgram()]);
    await until("the main thread to exit", () => parseStat(readFileSync(`/proc/${p.pid}/stat`, "utf8"))?.state === "Z", 3000);
    const b = bindProcess(p.pid, source)!;
    expect(b).toMatchObject({ pid: p.pid, pgid: p.pid });
    expect(groupAlive(b, source)).toBe(true);
    await p.exited;
    expect(groupAlive(b, source)).toBe(false);
  });


  test("binds a running process to its group, which dies with it", async () => {
    const p = spawnGroup(["sleep", "30"]);
    const b = bindProcess(p.pid, source)!;
    expect(b).toMatchObject({ pid: p.pid, pgid: p.pid });
    expect(groupAlive(b, source)).toBe(true);
    expect(groupSize(b, source)).toBe(1);
    p.kill("SIGKILL");
    await p.exited; // reaped by Bun: the pid is gone
    expect(groupAlive(b, source)).toBe(false);
    expect(groupSize(b, source)).toBe(0);
    expect(bindProcess(p.pid, source)).toBeNull();
  });

  test.if(hasSetsid)("counts a zombie as gone, though its pid still exists", async () => {
    // The outer shell becomes `sleep 30`, which never reaps: the inner shell, alone in a group
    // of its own (setsid), stays a zombie after it exits.
    const p = spawnGroup(["sh", "-c", "setsid sh -c 'echo $$; exec sleep 0.5' & exec sleep 30"]);
    const pid = Number(await firstLine(p));
    const b = bindProcess(pid, source)!;
    expect(b).toMatchObject({ pid, pgid: pid });
    expect(groupAlive(b, source)).toBe(true);
    await until("the child to become a zombie", () => isZombie(source, pid), 5000);
    expect(groupAlive(b, source)).toBe(false);
    expect(groupSize(b, source)).toBe(0);
    expect(bindProcess(pid, source)).toBeNull();
    expect(processUid(pid, source)).toBeNull();
  });

  test("keeps a group alive while a background job outlives its shell", async () => {
    const p = spawnGroup(["sh", "-c", "sleep 1.5 & read x"], "pipe");
    const b = bindProcess(p.pid, source)!;
    expect(b.pgid).toBe(p.pid);
    (p.stdin as import("bun").FileSink).end(); // the shell reads EOF and exits; the sleep does not
    await p.exited;
    expect(bindProcess(p.pid, source)).toBeNull();
    expect(groupAlive(b, source)).toBe(true);
    expect(groupSize(b, source)).toBe(1);
    await until("the background job to end", () => !groupAlive(b, source), 5000, 50);
  });

  test("binds a process that does not lead its group to the group it runs in", async () => {
    const p = spawnGroup(["sh", "-c", "sleep 30 & echo $!; wait"]);
    const child = Number(await firstLine(p));
    const b = bindProcess(child, source)!;
    expect(b).toMatchObject({ pid: child, pgid: p.pid });
    expect(groupAlive(b, source)).toBe(true);
  });

  test("does not let processes older than the bound one keep its group alive", async () => {
    // The shell leads the group and outlives the child, but it started first: not the child's work.
    // The pause puts the two starts in different clock ticks (/proc) or seconds (ps's lstart).
    const pause = source === "proc" ? 0.1 : 1.1;
    const p = spawnGroup(["sh", "-c", `sleep ${pause}; sleep 30 & echo $!; read x`], "pipe");
    const child = Number(await firstLine(p));
    const b = bindProcess(child, source)!;
    expect(b.pgid).toBe(p.pid);
    process.kill(child, "SIGKILL");
    await until("the child to be gone", () => tableOf(source).entry(child)?.zombie !== false, 3000);
    expect(tableOf(source).entry(p.pid)?.zombie).toBe(false);
    expect(groupAlive(b, source)).toBe(false);
  });

  test("treats a group id held by a newer process as reused", () => {
    const p = spawnGroup(["sleep", "30"]);
    const b = bindProcess(p.pid, source)!;
    const before = earlier(source, b.startTime);
    // The bound leader, recorded with another start: the pid now names a different process.
    expect(groupAlive({ ...b, startTime: before }, source)).toBe(false);
    expect(groupSize({ ...b, startTime: before }, source)).toBe(0);
    // A bound member whose group's id now belongs to a process started after it.
    expect(groupAlive({ pid: NO_SUCH_PID, pgid: p.pid, startTime: before }, source)).toBe(false);
    expect(groupAlive(b, source)).toBe(true);
  });

  test("binds nothing to a pid that does not exist", () => {
    for (const pid of [NO_SUCH_PID, 0, -1, 1.5]) expect(bindProcess(pid, source)).toBeNull();
    expect(processUid(NO_SUCH_PID, source)).toBeNull();
    const own = bindProcess(process.pid, source)!;
    expect(groupAlive({ pid: NO_SUCH_PID, pgid: NO_SUCH_PID, startTime: own.startTime }, source)).toBe(false);
  });

  test("tells the uid of a live process", () => {
    expect(processUid(process.pid, source)).toBe(process.getuid!());
  });
});

test.if(sources.includes("proc"))("never matches a start time recorded under another boot", () => {
  const p = spawnGroup(["sleep", "30"]);
  const b = bindProcess(p.pid, "proc")!;
  const ticks = b.startTime.slice(b.startTime.lastIndexOf(":") + 1);
  expect(groupAlive({ ...b, startTime: `00000000-0000-0000-0000-000000000000:${ticks}` }, "proc")).toBe(false);
});

describe("parsing", () => {
  test("reads a stat line from the last ')', whatever the command name holds", () => {
    const line = "4242 (we) ird (name) S 17 4200 4200 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 123456 180224 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
    expect(parseStat(line)).toEqual({ pid: 4242, comm: "we) ird (name", state: "S", ppid: 17, pgrp: 4200, startTicks: 123456 });
    expect(parseStat("4242 (sleep Z")).toBeNull();
    expect(parseStat("")).toBeNull();
  });

  test("reads a ps line with a zombie state and a padded start date", () => {
    expect(parsePsLine("  42    40 Z+   Tue Nov  3 18:43:49 2026")).toEqual({
      pid: 42,
      pgid: 40,
      zombie: true,
      startTime: "Tue Nov 3 18:43:49 2026",
      started: Date.parse("Tue Nov 3 18:43:49 2026") / 1000,
    });
    expect(parsePsLine("  42    40 Ss")).toBeNull();
  });
});
