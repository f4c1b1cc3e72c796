// Process facts from Linux's /proc: one small file read per question, no child process, so the
// pool layer can check every bound slot every 250 ms. A start time is the boot id plus the
// process's start in clock ticks since boot, so neither PID reuse nor a reboot can impersonate
// a recorded process.
import { readdirSync, readFileSync } from "node:fs";
import type { ProcessEntry, ProcessTable } from "./process-table.ts";

export interface StatFields {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgrp: number;
  /** Field 22: clock ticks after boot at which the process started. */
  startTicks: number;
}

/** Parses one /proc/<pid>/stat line, or null if it is not one. */
export function parseStat(line: string): StatFields | null {
  // comm is whatever the program named itself: spaces and ')' included. The kernel prints it
  // between the first '(' and the last ')', so only the last ')' is a reliable delimiter.
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const rest = line.slice(close + 2).split(" "); // rest[0] is field 3 (state)
  const pid = Number(line.slice(0, open).trim());
  const ppid = Number(rest[1]);
  const pgrp = Number(rest[2]);
  const startTicks = Number(rest[19]); // field 22
  const state = rest[0] ?? "";
  if (!Number.isInteger(pid) || !state || ![ppid, pgrp, startTicks].every(Number.isInteger)) return null;
  return { pid, comm: line.slice(open + 1, close), state, ppid, pgrp, startTicks };
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

let bootIdCache: string | undefined;
/** Changes at every boot; a start time recorded under another boot never matches. */
export function bootId(): string {
  return (bootIdCache ??= read("/proc/sys/kernel/random/boot_id")?.trim() || "unknown-boot");
}

// A main thread that exited (pthread_exit) while other threads run shows state Z, yet the
// process is alive; its status then counts more than the one dead thread.
function hasLiveThreads(pid: number): boolean {
  const m = /^Threads:\s+(\d+)/m.exec(read(`/proc/${pid}/status`) ?? "");
  return m !== null && Number(m[1]) > 1;
}

function entry(pid: number): ProcessEntry | null {
  const text = read(`/proc/${pid}/stat`);
  const s = text === undefined ? null : parseStat(text);
  if (!s) return null;
  return {
    pid: s.pid,
    pgid: s.pgrp,
    zombie: (s.state === "Z" || s.state === "X") && !hasLiveThreads(pid),
    startTime: `${bootId()}:${s.startTicks}`,
    started: s.startTicks,
  };
}

function* entries(): Iterable<ProcessEntry> {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return;
  }
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue; // only the numeric directories are processes
    const e = entry(Number(name)); // a process may exit between readdir and read: null, skipped
    if (e) yield e;
  }
}

function started(startTime: string): number | null {
  const at = startTime.lastIndexOf(":");
  if (at < 0 || startTime.slice(0, at) !== bootId()) return null;
  const ticks = Number(startTime.slice(at + 1));
  return Number.isInteger(ticks) ? ticks : null;
}

function uid(pid: number): number | null {
  const e = entry(pid);
  if (!e || e.zombie) return null;
  const m = /^Uid:\s+(\d+)/m.exec(read(`/proc/${pid}/status`) ?? ""); // the first column is the real uid
  return m ? Number(m[1]) : null;
}

export const procTable: ProcessTable = { entry, entries, started, uid };
