// The seam between the liveness rule (process.ts) and where process facts come from: Linux's
// /proc (proc-stat.ts) or `ps` elsewhere (ps.ts). Keeping the rule in one place means both
// sources answer "is this group still alive?" the same way, and the ps path is testable on Linux.

export interface ProcessEntry {
  pid: number;
  pgid: number;
  /** Exited but not yet reaped (Z, or X on Linux). Counts as gone: without an init, orphans may never be reaped. */
  zombie: boolean;
  /** Identity of this incarnation of the pid: equal strings mean the same process. */
  startTime: string;
  /** startTime as a number that orders processes by when they started (clock ticks, or seconds for ps). */
  started: number;
}

export interface ProcessTable {
  /** The process `pid`, zombie or not, or null. */
  entry(pid: number): ProcessEntry | null;
  entries(): Iterable<ProcessEntry>;
  /** The orderable form of a recorded startTime, or null when it cannot be from this boot of this machine. */
  started(startTime: string): number | null;
  /** Real uid of a non-zombie process, or null. */
  uid(pid: number): number | null;
  /** A cheap "certainly no process has this group" answer, where one exists. */
  groupMissing?(pgid: number): boolean;
}
