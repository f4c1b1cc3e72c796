// The one waiter mechanism. Every primitive that can block (locks, task claims, events, and
// later slots and path claims) keeps its waiters here: a FIFO per resource key, where each
// waiter is either *attached* (its call is blocked right now) or *detached* (its call returned,
// it holds a wake_token and keeps its place for a grace period).
//
// The rules that fix v2's stale heads live here, once:
// - a call blocks with a deadline and an AbortSignal; on timeout or client disconnect it is
//   detached at once, so it never stalls the waiters behind it;
// - a grant removes the waiter inside the granting transaction and answers its call only after
//   that transaction commits;
// - a detached waiter that calls again with its token resumes its place in line.
// What a primitive does with detached waiters (pass over, offer, ...) is its own policy.
import type { Clock } from "./clock.ts";
import { newToken } from "./tokens.ts";
import type { Scheduler } from "./timers.ts";

export type Outcome<R> = { kind: "granted"; value: R } | { kind: "timeout" } | { kind: "aborted" };

export interface Waiter<Req, R> {
  readonly id: number;
  readonly key: string;
  readonly token: string;
  req: Req;
  /** When it joined the line (ms). */
  readonly since: number;
  attached: boolean;
  /** @internal the blocked call's resolver, while attached */
  settle?: ((o: Outcome<R>) => void) | undefined;
}

export interface WaitQueueOptions {
  /** Prefix for this queue's scheduler keys, e.g. "lock". */
  name: string;
  clock: Clock;
  scheduler: Scheduler;
  /** Runs fn after the current transaction commits, or orElse if it rolls back. */
  afterCommit: (fn: () => void, orElse?: () => void) => void;
  /** How long a detached waiter keeps its place; 0 removes it as soon as its call returns. */
  graceMs: number;
}

let waiterSeq = 0;

export class WaitQueue<Req, R> {
  private readonly lines = new Map<string, Waiter<Req, R>[]>();
  private readonly byToken = new Map<string, Waiter<Req, R>>();

  constructor(private readonly o: WaitQueueOptions) {}

  /** Puts a new, detached waiter at the tail of key's line. */
  enqueue(key: string, req: Req): Waiter<Req, R> {
    const w: Waiter<Req, R> = { id: ++waiterSeq, key, token: newToken(), req, since: this.o.clock.now(), attached: false };
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = []));
    line.push(w);
    this.byToken.set(w.token, w);
    return w;
  }

  /** The waiter holding this wake_token on this key, if it is still in line. */
  find(token: string | undefined, key: string): Waiter<Req, R> | undefined {
    if (!token) return undefined;
    const w = this.byToken.get(token);
    return w && w.key === key ? w : undefined;
  }

  /** key's line, earliest first. */
  line(key: string): readonly Waiter<Req, R>[] {
    return this.lines.get(key) ?? [];
  }

  firstAttached(key: string): Waiter<Req, R> | undefined {
    return this.line(key).find((w) => w.attached);
  }

  /** 1-based place in line. */
  position(w: Waiter<Req, R>): number {
    return this.line(w.key).indexOf(w) + 1;
  }

  keys(): IterableIterator<string> {
    return this.lines.keys();
  }

  get size(): number {
    return this.byToken.size;
  }

  /**
   * Blocks the waiter's call until it is granted, the deadline passes, or the signal aborts
   * (the client went away). On timeout or abort it is detached and keeps its place.
   */
  block(w: Waiter<Req, R>, deadline: number, signal?: AbortSignal): Promise<Outcome<R>> {
    if (w.settle) w.settle({ kind: "aborted" }); // the same token blocking twice: the newer call wins
    this.o.scheduler.cancel(this.graceKey(w));
    return new Promise<Outcome<R>>((resolve) => {
      const onAbort = () => this.detach(w, { kind: "aborted" });
      w.attached = true;
      w.settle = (outcome) => {
        w.settle = undefined;
        w.attached = false;
        this.o.scheduler.cancel(this.deadlineKey(w));
        signal?.removeEventListener("abort", onAbort);
        resolve(outcome);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.o.scheduler.at(this.deadlineKey(w), deadline, () => this.detach(w, { kind: "timeout" }));
    });
  }

  /** Hands value to the waiter: it leaves the line now, and its call is answered after commit. */
  grant(w: Waiter<Req, R>, value: R): void {
    this.unlink(w);
    const settle = w.settle;
    w.settle = undefined;
    w.attached = false;
    this.o.scheduler.cancel(this.deadlineKey(w));
    // If the granting transaction rolls back, the grant never happened: the call is answered
    // as aborted (its primitive reports the resource as held) rather than left hanging.
    if (settle) this.o.afterCommit(() => settle({ kind: "granted", value }), () => settle({ kind: "aborted" }));
  }

  /** A detached waiter whose caller came back without blocking keeps its place for a fresh grace. */
  keep(w: Waiter<Req, R>): void {
    if (w.attached || !this.byToken.has(w.token) || this.o.graceMs <= 0) return;
    this.o.scheduler.at(this.graceKey(w), this.o.clock.now() + this.o.graceMs, () => this.remove(w));
  }

  /** Takes the waiter out of line; a blocked call is answered as aborted. */
  remove(w: Waiter<Req, R>): void {
    this.unlink(w);
    this.o.scheduler.cancel(this.graceKey(w));
    w.settle?.({ kind: "aborted" });
  }

  /** Removes every waiter, in any line, that matches. */
  removeWhere(pred: (w: Waiter<Req, R>) => boolean): number {
    const doomed = [...this.byToken.values()].filter(pred);
    for (const w of doomed) this.remove(w);
    return doomed.length;
  }

  /** Shutdown: every blocked call is answered as aborted and the lines are emptied. */
  clear(): void {
    for (const w of [...this.byToken.values()]) this.remove(w);
  }

  private detach(w: Waiter<Req, R>, outcome: Outcome<R>): void {
    w.settle?.(outcome);
    if (!this.byToken.has(w.token)) return;
    if (this.o.graceMs <= 0) return this.remove(w);
    this.keep(w);
  }

  private unlink(w: Waiter<Req, R>): void {
    if (!this.byToken.delete(w.token)) return;
    const line = this.lines.get(w.key);
    if (!line) return;
    const i = line.indexOf(w);
    if (i >= 0) line.splice(i, 1);
    if (line.length === 0) this.lines.delete(w.key);
  }

  private deadlineKey(w: Waiter<Req, R>): string {
    return `${this.o.name}:wait:${w.id}`;
  }

  private graceKey(w: Waiter<Req, R>): string {
    return `${this.o.name}:grace:${w.id}`;
  }
}
