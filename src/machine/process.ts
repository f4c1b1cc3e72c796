// Process-group liveness for slots bound to a pid (SPEC §5): a slot lives exactly as long as
// its process group, so a background job outliving its shell keeps it, a zombie does not, and a
// reused PID or group id never passes for the process that was bound. Facts only: what to do
// with a dead group is the pool layer's business.
import { existsSync, readlinkSync } from "node:fs";
import { procTable } from "./proc-stat.ts";
import type { ProcessEntry, ProcessTable } from "./process-table.ts";
import { psTable } from "./ps.ts";

export interface ProcessBinding {
  pid: number;
  pgid: number;
  /** `${bootId}:${ticks}` from /proc, or ps's lstart; compare only with the same source. */
  startTime: string;
  /** The machine the process runs on, when daemons on several machines share the store. */
  host?: string;
}

/** "proc" reads /proc (Linux); "ps" runs ps (everywhere else, and testable on Linux too). */
export type ProcessSource = "proc" | "ps";

export const DEFAULT_SOURCE: ProcessSource = existsSync("/proc/self/stat") ? "proc" : "ps";

function table(source: ProcessSource): ProcessTable {
  return source === "proc" ? procTable : psTable();
}

function validPid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0;
}

/** The live (non-zombie) process `pid` as a binding to its process group, or null if there is no such process or it is a zombie. */
export function bindProcess(pid: number, source: ProcessSource = DEFAULT_SOURCE): ProcessBinding | null {
  if (!validPid(pid)) return null;
  const e = table(source).entry(pid);
  return e && !e.zombie ? { pid: e.pid, pgid: e.pgid, startTime: e.startTime } : null;
}

/** uid of a live process, or null. */
export function processUid(pid: number, source: ProcessSource = DEFAULT_SOURCE): number | null {
  return validPid(pid) ? table(source).uid(pid) : null;
}

// A member is a live process of the group that started no earlier than the bound process:
// processes older than it (say the shell that ran it, when it did not get a group of its own)
// are not its work and must not hold its slot forever.
function isMember(b: ProcessBinding, since: number, e: ProcessEntry): boolean {
  return !e.zombie && e.pgid === b.pgid && e.started >= since;
}

// Linux and the BSDs never hand out a pid while some process still uses it as a group id, so if the pid
// equal to the group id now belongs to a process started after the binding, the bound group
// emptied out and the id was reused. For a bound leader the start must match exactly.
function groupIdReused(b: ProcessBinding, since: number, holder: ProcessEntry): boolean {
  return b.pid === b.pgid ? holder.startTime !== b.startTime : holder.started > since;
}

// Where the last scan found a member: while that process lives, the next check is one read
// instead of a scan of every process. Bounded, since bindings are plain data nobody unregisters.
const MAX_HINTS = 4096;
const hints = new Map<string, number>();
const hintKey = (b: ProcessBinding) => `${b.pgid}/${b.startTime}`;

/** The start to compare members with, or null when the binding cannot be current or its group id was reused. */
function precheck(b: ProcessBinding, t: ProcessTable): number | null {
  const since = validPid(b.pgid) ? t.started(b.startTime) : null;
  if (since === null) return null;
  const holder = t.entry(b.pgid);
  return holder && groupIdReused(b, since, holder) ? null : since;
}

/** True while some non-zombie process of the binding's group, started no earlier than the bound process, exists. */
export function groupAlive(b: ProcessBinding, source: ProcessSource = DEFAULT_SOURCE): boolean {
  const t = table(source);
  if (t.groupMissing?.(b.pgid)) return forget(b);
  const self = validPid(b.pid) ? t.entry(b.pid) : null;
  // The common case, one read: the bound process itself is still running in its group.
  if (self && !self.zombie && self.pgid === b.pgid && self.startTime === b.startTime) return true;
  const since = precheck(b, t);
  if (since !== null) {
    const hinted = hints.get(hintKey(b));
    const h = hinted === undefined ? null : t.entry(hinted);
    if (h && isMember(b, since, h)) return true;
    for (const e of t.entries()) {
      if (!isMember(b, since, e)) continue;
      if (hints.size >= MAX_HINTS) hints.clear();
      hints.set(hintKey(b), e.pid);
      return true;
    }
  }
  return forget(b);
}

function forget(b: ProcessBinding): false {
  hints.delete(hintKey(b));
  return false;
}

/** How many non-zombie processes are in the group now (for messages). */
export function groupSize(b: ProcessBinding, source: ProcessSource = DEFAULT_SOURCE): number {
  const t = table(source);
  const since = t.groupMissing?.(b.pgid) ? null : precheck(b, t);
  if (since === null) return 0;
  let n = 0;
  for (const e of t.entries()) if (isMember(b, since, e)) n++;
  return n;
}

/**
 * The PID namespace this process runs in, as `readlink /proc/self/ns/pid` names it
 * ("pid:[4026531836]"), or null where there is no such link (macOS and the BSDs have no PID
 * namespaces; a Linux sandbox may have no /proc). A pid means the same process to two programs
 * only when both answer the same string here.
 */
export function pidNamespace(): string | null {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}
