// Process-bound slots: a slot (or a queued request) bound to a pid lives exactly as long as
// that process group, checked every PROCESS_WATCH_MS while any exists, and at start; never
// released merely for being old. On a shared store a binding is judged only on its own
// machine, and a machine whose daemons have all been gone for hostGoneMs has its bindings
// released (the host watch), or the team's budget would stay held for good.
import { hostname } from "node:os";
import { AirlockError, errorMessage } from "../../errors.ts";
import { createLog } from "../../log.ts";
import { bindProcess, groupAlive, type ProcessBinding, processUid } from "../../machine/process.ts";
import { all, type Tx } from "../../store/tx.ts";
import type { Ctx } from "../context.ts";
import type { WaitQueue } from "../wait.ts";
import { PROCESS_WATCH_MS, type SlotGrant, type SlotRow, type SlotWait, type SlotWaiter } from "./types.ts";

const HOST_CHECK_MS = 5_000;

const log = createLog("pools");

/** What the watch does with a binding whose process (or machine) is gone. */
export interface WatchHost {
  /** Deletes a held slot, journals why and serves the line. */
  releaseSlot(token: string, reason: string): Tx<boolean>;
  /** Takes a request out of line, journalled as withdrawn. */
  withdraw(w: SlotWaiter, reason: string): Tx<void>;
}

export class ProcessWatch {
  private watching = false;
  private watchingHosts = false;

  constructor(
    private readonly c: Ctx,
    private readonly waits: WaitQueue<SlotWait, SlotGrant>,
    private readonly host: WatchHost,
    /** A shared store: how long a machine's daemons may all be gone before its bound slots go. */
    private readonly hostGoneMs: number,
  ) {}

  /** Checks bound slots and requests every PROCESS_WATCH_MS while there are any. */
  watch(): void {
    if (this.watching) return;
    this.armWatch(PROCESS_WATCH_MS);
  }

  /** At start: process-bound holders and requests are checked against real liveness at once. */
  checkNow(): void {
    this.armWatch(0);
  }

  private armWatch(inMs: number): void {
    this.watching = true;
    this.every("pools:watch", inMs, (act) => this.reconcile(act), () => this.watch(), () => (this.watching = false));
  }

  /**
   * A shared store: slots bound on other machines are theirs to judge, but a machine whose
   * daemons have all been gone for hostGoneMs has nobody left to see its processes end. Its
   * bound slots are released then (and its bound requests withdrawn), or the team's budget
   * would stay held for good. Checked every HOST_CHECK_MS while such a binding exists.
   */
  watchHosts(): void {
    if (this.watchingHosts || !this.c.store.shared) return;
    this.watchingHosts = true;
    this.every("pools:hosts", HOST_CHECK_MS, (act) => this.hostsGone(act), () => this.watchHosts(), () => (this.watchingHosts = false));
  }

  /**
   * One periodic check, `inMs` from now: `check(act)` counts the bindings it watches
   * (`remaining`) and those whose process or machine is gone (`gone`), and with `act` releases
   * or withdraws the latter. `ended` runs first (the check is no longer armed), `again` after,
   * while anything remains to watch. On SQLite the check runs as a scheduler entry, in the
   * transaction of every entry due with it. On a shared store a check that acted every time in
   * the global order stopped every daemon's row bodies, four times a second on each machine
   * running a bound build (docs/cluster.md, "Periodic checks"): there it looks first, in the
   * shared order (a row read beside every daemon's row bodies), and takes the global order only
   * when something is gone, where it checks again and acts.
   */
  private every(key: string, inMs: number, check: (act: boolean) => Tx<Check>, again: () => void, ended: () => void): void {
    const at = this.c.clock.now() + inMs;
    if (!this.c.rowsOverlap) {
      this.c.scheduler.at(key, at, function* () {
        ended();
        if ((yield* check(true)).remaining > 0) again();
      });
      return;
    }
    this.c.scheduler.atOutside(key, at, () => {
      ended();
      void this.lookThenAct(key, check).then(
        (remaining) => remaining && again(),
        (err: unknown) => {
          // The store is down or the check failed: it is tried again, or a binding whose process
          // exits meanwhile would hold its slot for good.
          log.warn(`${key}: the check failed (tried again): ${errorMessage(err)}`);
          again();
        },
      );
    });
  }

  /** A shared store's check: true while anything remains to watch. */
  private async lookThenAct(key: string, check: (act: boolean) => Tx<Check>): Promise<boolean> {
    const seen = await this.c.rowRead("slots", key, () => check(false));
    if (seen.gone === 0) return seen.remaining > 0;
    return (await this.c.tx(() => check(true))).remaining > 0;
  }

  private *hostsGone(act: boolean): Tx<Check> {
    const me = hostname();
    const seen = new Map((yield* all<{ host: string; seen_at: number }>("SELECT host, seen_at FROM hosts")).map((h) => [h.host, h.seen_at]));
    const gone = (b: ProcessBinding) => b.host !== undefined && b.host !== me && !((seen.get(b.host) ?? 0) > this.c.clock.now() - this.hostGoneMs);
    const reason = (b: ProcessBinding) => `no daemon of its machine ${b.host} has been seen for ${Math.round(this.hostGoneMs / 1000)} s`;
    const out: Check = { remaining: 0, gone: 0 };
    for (const s of yield* all<SlotRow>("SELECT * FROM slots WHERE pid IS NOT NULL")) {
      const b = bindingOf(s)!;
      if (b.host === undefined || b.host === me) continue;
      yield* tally(out, !gone(b), act, () => this.host.releaseSlot(s.token, reason(b)));
    }
    for (const w of [...this.waits.all()]) {
      const b = w.req.binding;
      if (!b || b.host === undefined || b.host === me) continue;
      yield* tally(out, !gone(b), act, () => this.host.withdraw(w, reason(b)));
    }
    return out;
  }

  /** The bindings of this machine: with `act`, those whose group is gone are released or withdrawn. */
  private *reconcile(act: boolean): Tx<Check> {
    // On a shared store only the process's own machine can tell whether it runs: another
    // machine would find no such pid and release the slot of a build still running there.
    const ours = (b: ProcessBinding) => !this.c.store.shared || b.host === undefined || b.host === hostname();
    const out: Check = { remaining: 0, gone: 0 };
    for (const s of yield* all<SlotRow>("SELECT * FROM slots WHERE pid IS NOT NULL")) {
      const b = bindingOf(s)!;
      if (!ours(b)) continue;
      yield* tally(out, groupAlive(b), act, () => this.host.releaseSlot(s.token, "process exited"));
    }
    for (const w of [...this.waits.all()]) {
      if (!w.req.binding || !ours(w.req.binding)) continue;
      yield* tally(out, groupAlive(w.req.binding), act, () => this.host.withdraw(w, "process exited"));
    }
    return out;
  }
}

/** What a periodic check found: the bindings it still watches, and those gone (counted only when it does not act). */
interface Check {
  remaining: number;
  gone: number;
}

/** One binding into a check: alive (still watched), or gone: ended when the check acts, else counted. */
function* tally(out: Check, alive: boolean, act: boolean, end: () => Tx<unknown>): Tx<void> {
  if (alive) out.remaining++;
  else if (act) yield* end();
  else out.gone++;
}

/** A stored binding (a slot's pid, pgid and start time), or null when it has none. */
export function bindingOf(r: { pid: number | null; pgid: number | null; pid_start: string | null }): ProcessBinding | null {
  if (r.pid === null || r.pgid === null || r.pid_start === null) return null;
  const at = r.pid_start.lastIndexOf("@");
  return at < 0 ? { pid: r.pid, pgid: r.pgid, startTime: r.pid_start } : { pid: r.pid, pgid: r.pgid, startTime: r.pid_start.slice(0, at), host: r.pid_start.slice(at + 1) };
}

/** The stored start time: with the machine's name after an @ (neither /proc's nor ps's form has one). */
export function pidStart(b: ProcessBinding): string {
  return b.host === undefined ? b.startTime : `${b.startTime}@${b.host}`;
}

/**
 * A pid a slot may be bound to: a live process of the daemon's own user, not PID 1 and not the
 * daemon itself (neither would ever exit, so the slot would never be released).
 */
export function checkPid(pid: number): ProcessBinding {
  if (pid === 1) throw new AirlockError("invalid_argument", "pid must not be 1: init never exits, so the slot would never be released");
  if (pid === process.pid) throw new AirlockError("invalid_argument", `pid must not be the daemon's own (${pid}): the slot would never be released`);
  const b = bindProcess(pid);
  if (!b) throw new AirlockError("invalid_argument", `pid must be a live process (got ${pid}, which is not running)`);
  const uid = processUid(pid);
  const mine = process.getuid?.();
  if (mine !== undefined && uid !== null && uid !== mine) {
    throw new AirlockError("invalid_argument", `pid must be a process of the daemon's own user (got ${pid}, owned by uid ${uid})`);
  }
  if (b.pgid === 0) throw new AirlockError("invalid_argument", `pid must be a user process (got ${pid}, a kernel thread)`);
  if (b.pgid === process.pid || b.pgid === 1) {
    throw new AirlockError("invalid_argument", `pid ${pid} is in the daemon's or init's process group, which never exits; run the work in its own group`);
  }
  return { ...b, host: hostname() };
}
