// Process-bound slots: a slot (or a queued request) bound to a pid lives exactly as long as
// that process group, checked every PROCESS_WATCH_MS while any exists, and at start; never
// released merely for being old. On a shared store a binding is judged only on its own
// machine, and a machine whose daemons have all been gone for hostGoneMs has its bindings
// released (the host watch), or the team's budget would stay held for good.
import { hostname } from "node:os";
import { AirlockError } from "../../errors.ts";
import { bindProcess, groupAlive, type ProcessBinding, processUid } from "../../machine/process.ts";
import { all, type Tx } from "../../store/tx.ts";
import type { Ctx } from "../context.ts";
import type { WaitQueue } from "../wait.ts";
import { PROCESS_WATCH_MS, type SlotGrant, type SlotRow, type SlotWait, type SlotWaiter } from "./types.ts";

const HOST_CHECK_MS = 5_000;

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
    this.watching = true;
    this.c.scheduler.at("pools:watch", this.c.clock.now() + PROCESS_WATCH_MS, () => this.watchTick());
  }

  /** At start: process-bound holders and requests are checked against real liveness at once. */
  checkNow(): void {
    this.c.scheduler.at("pools:watch", this.c.clock.now(), () => this.watchTick());
    this.watching = true;
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
    this.c.scheduler.at("pools:hosts", this.c.clock.now() + HOST_CHECK_MS, () => this.hostsTick());
  }

  private *hostsTick(): Tx<void> {
    this.watchingHosts = false;
    const me = hostname();
    const seen = new Map((yield* all<{ host: string; seen_at: number }>("SELECT host, seen_at FROM hosts")).map((h) => [h.host, h.seen_at]));
    const gone = (b: ProcessBinding) => b.host !== undefined && b.host !== me && !((seen.get(b.host) ?? 0) > this.c.clock.now() - this.hostGoneMs);
    const reason = (b: ProcessBinding) => `no daemon of its machine ${b.host} has been seen for ${Math.round(this.hostGoneMs / 1000)} s`;
    let remaining = 0;
    for (const s of yield* all<SlotRow>("SELECT * FROM slots WHERE pid IS NOT NULL")) {
      const b = bindingOf(s)!;
      if (b.host === undefined || b.host === me) continue;
      if (gone(b)) yield* this.host.releaseSlot(s.token, reason(b));
      else remaining++;
    }
    for (const w of [...this.waits.all()]) {
      const b = w.req.binding;
      if (!b || b.host === undefined || b.host === me) continue;
      if (gone(b)) yield* this.host.withdraw(w, reason(b));
      else remaining++;
    }
    if (remaining > 0) this.watchHosts();
  }

  /** The "pools:watch" entry: reconciles, and watches on while anything bound remains. */
  private *watchTick(): Tx<void> {
    this.watching = false;
    if (yield* this.reconcile()) this.watch();
  }

  /** Releases what is bound to a group that is gone; true while anything bound remains. */
  private *reconcile(): Tx<boolean> {
    let bound = 0;
    // On a shared store only the process's own machine can tell whether it runs: another
    // machine would find no such pid and release the slot of a build still running there.
    const ours = (b: ProcessBinding) => !this.c.store.shared || b.host === undefined || b.host === hostname();
    for (const s of yield* all<SlotRow>("SELECT * FROM slots WHERE pid IS NOT NULL")) {
      const b = bindingOf(s)!;
      if (!ours(b)) continue;
      if (groupAlive(b)) bound++;
      else yield* this.host.releaseSlot(s.token, "process exited");
    }
    for (const w of [...this.waits.all()]) {
      if (!w.req.binding || !ours(w.req.binding)) continue;
      if (groupAlive(w.req.binding)) bound++;
      else yield* this.host.withdraw(w, "process exited");
    }
    return bound > 0;
  }
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
