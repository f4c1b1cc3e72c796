// Process facts where there is no /proc (macOS, the BSDs): one `ps` run per question. ps's
// lstart has one-second resolution, so PID reuse within the same second as the recorded start
// goes unseen here; /proc's clock ticks do not have that blind spot.
import type { ProcessEntry, ProcessTable } from "./process-table.ts";

let psPath: string | null | undefined;
/** Where `ps` is, or null when this machine has none. */
export function findPs(): string | null {
  if (psPath === undefined) psPath = Bun.which("ps") ?? null;
  return psPath;
}

function runPs(args: string[]): string {
  const ps = findPs();
  if (!ps) return "";
  // LC_ALL=C keeps lstart in the one format Date.parse reads ("Mon Nov  3 18:43:49 2026").
  const r = Bun.spawnSync([ps, ...args], { env: { LC_ALL: "C" }, stdout: "pipe", stderr: "ignore" });
  return r.stdout.toString();
}

/** Parses one line of `ps -o pid=,pgid=,stat=,lstart=`, or null if it is not one. */
export function parsePsLine(line: string): ProcessEntry | null {
  const f = line.trim().split(/\s+/);
  if (f.length < 4) return null;
  const pid = Number(f[0]);
  const pgid = Number(f[1]);
  const stat = f[2]!;
  const startTime = f.slice(3).join(" "); // whitespace normalised so the same start always reads the same
  const started = Date.parse(startTime) / 1000;
  if (!Number.isInteger(pid) || !Number.isInteger(pgid) || Number.isNaN(started)) return null;
  // "Zl" on Linux: the main thread exited but other threads run, so the process is alive.
  return { pid, pgid, zombie: stat.startsWith("Z") && !stat.includes("l"), startTime, started };
}

/** A table over one `ps -A` snapshot, taken at its first use: one spawn per question. */
export function psTable(): ProcessTable {
  let snapshot: Map<number, ProcessEntry> | undefined;
  const all = () => {
    if (!snapshot) {
      snapshot = new Map();
      for (const line of runPs(["-A", "-o", "pid=,pgid=,stat=,lstart="]).split("\n")) {
        const e = parsePsLine(line);
        if (e) snapshot.set(e.pid, e);
      }
    }
    return snapshot;
  };
  return {
    entry: (pid) => all().get(pid) ?? null,
    entries: () => all().values(),
    started(startTime) {
      const s = Date.parse(startTime) / 1000;
      return Number.isNaN(s) ? null : s;
    },
    uid(pid) {
      const [uid, stat] = runPs(["-o", "uid=,stat=", "-p", String(pid)]).trim().split(/\s+/);
      if (!uid || !stat || (stat.startsWith("Z") && !stat.includes("l"))) return null;
      const n = Number(uid);
      return Number.isInteger(n) ? n : null;
    },
    groupMissing(pgid) {
      if (!Number.isInteger(pgid) || pgid <= 1) return false; // kill(-1) means every process, not group 1
      // kill(-pgid, 0) asks the kernel whether any process (zombies included) is in the group,
      // without spawning anything; ESRCH is a certain "gone", anything else needs the ps look.
      try {
        process.kill(-pgid, 0);
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === "ESRCH";
      }
    },
  };
}
