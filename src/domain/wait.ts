// The one waiter mechanism. Every primitive that can block (locks, lock groups, task claims,
// events, slots, path claims) keeps its waiters here: a FIFO per resource key, where each
// waiter is either *attached* (its call is blocked right now) or *detached* (its call returned,
// it holds a wake_token and keeps its place for a grace period).
//
// The rules that fix v2's stale heads live here, once:
// - a call blocks with a deadline and an AbortSignal; on timeout or client disconnect it is
//   detached at once, so it never stalls the waiters behind it;
// - one agent holds at most one place in a line: a waiter is found by its wake_token, or else
//   by (agent_id, resource), so an agent whose client dropped before the token arrived resumes
//   its own place instead of taking a second one;
// - a grant removes the waiter inside the granting transaction and answers its call only after
//   that transaction commits; if the call's client is gone by then, the grant is handed back
//   (the primitive's `revoke`) so that it passes to the next waiter instead of sitting with an
//   agent that never learns it holds it;
// - a detached waiter that calls again resumes its place in line.
// A waiter may stand in several lines at once (an all-or-nothing lock group): its place in
// each line is its arrival order, one sequence for all of a kernel's lines, so every line
// orders any two waiters the same way and waiters that reserve resources in that order can
// never wait on each other in a cycle.
// What a primitive does with detached waiters (pass over, offer, pause) is its own policy.
// On a store shared by several daemons (docs/cluster.md), a line also holds the waiters of
// the other daemons (`daemon` set): their calls block there, so a grant to one is handed to
// the cluster (`onForeignGrant`), which writes it down for that daemon to answer.
import type { Condition, Tx } from "../store/tx.ts";
import type { Clock } from "./clock.ts";
import { newToken } from "./tokens.ts";
import type { Scheduler } from "./timers.ts";
import { type EnqueueOptions, type ForeignGrant, isBlocked, type Outcome, type Sequences, type SharedWaiter, type WaitCodec, type Waiter } from "./waiter.ts";

export interface WaitQueueOptions<Req, R> {
  /** Prefix for this queue's scheduler keys, e.g. "lock". */
  name: string;
  clock: Clock;
  /** The numbers every queue of this kernel shares (one object per kernel, made by createCtx). */
  sequences: Sequences;
  scheduler: Scheduler;
  /** Runs fn after the current transaction commits, or orElse if it rolls back. */
  afterCommit: (fn: () => void, orElse?: () => void) => void;
  /**
   * Runs the body fn makes in a transaction of its own, in turn with every other (joining the
   * current one on a store that answers at once); a failure is reported under `what`.
   */
  tx: (fn: () => Tx<void>, what: string) => void;
  /** How long a detached waiter keeps its place; 0 removes it as soon as its call returns. */
  graceMs: number;
  /**
   * On a shared store: the lines hold only this daemon's calls and are never stored (the change
   * feed's watchers: nobody else grants them a place, a change wakes them). A call leaving at
   * its deadline or by its client's going leaves at once, outside any transaction, since no
   * row changes (a line kept for every daemon leaves in a transaction of the global order).
   * Only for grace-0 queues whose grants hand nothing over (no revoke, no onDetach).
   */
  local?: boolean;
  /** Runs (in a transaction) when a blocked call ends without a grant: timeout or disconnect. */
  onDetach?: (w: Waiter<Req, R>) => Tx<void>;
  /** Runs (in a transaction) when a detached waiter's grace ends and it leaves the line. */
  onExpire?: (w: Waiter<Req, R>) => Tx<void>;
  /** Runs whenever a waiter joins or leaves a line, or its call starts or stops blocking. */
  onChange?: () => void;
  /**
   * Takes back a grant whose call's client was gone when it was answered, and passes it on:
   * the primitive's hand-back (runs in a transaction of its own, or the cluster's).
   */
  revoke?: (w: Waiter<Req, R>, value: R) => Tx<void>;
  /** How a request and a grant are written down for other daemons (JSON as they are, by default). */
  codec?: WaitCodec<Req, R>;
  /**
   * Runs when a call blocks with a signal: a call task (src/mcp/call-tasks.ts) learns here, by its
   * call's own signal, that its call waits in line (and which place it holds) instead of answering.
   */
  onBlock?: (queue: WaitQueue<unknown, unknown>, w: Waiter<unknown, unknown>, signal: AbortSignal) => void;
}

const agentKey = (agentId: string, keys: readonly string[]) => `${agentId}\u0000${keys.join("\u0000")}`;
const sameKeys = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((k, i) => k === b[i]);

export class WaitQueue<Req, R> {
  /** Set by the cluster on a shared store: receives grants to other daemons' waiters. */
  onForeignGrant: ForeignGrant | undefined;
  /** Set by the lines (src/domain/lines.ts): a waiter joined, left or changed, so its row may differ. */
  onWaiterChanged: ((w: Waiter<Req, R>) => void) | undefined;
  /** Set by the lines on a shared store: whether any daemon's waiter stands in key's line, by the rows. */
  storedLine: ((key: string) => Tx<boolean>) | undefined;
  /**
   * Set with storedLine: the same question as a condition of a statement, true when no stored
   * place may stand in key's line (a place it cannot rule out counts as one), with its values.
   */
  nobodyStored: ((key: string) => Condition) | undefined;
  private readonly lines = new Map<string, Waiter<Req, R>[]>();
  private readonly byToken = new Map<string, Waiter<Req, R>>();
  private readonly byAgent = new Map<string, Waiter<Req, R>>();
  /** Every place each agent holds, in any line (the wait-for graph reads it). */
  private readonly ofAgent = new Map<string, Set<Waiter<Req, R>>>();

  constructor(private readonly o: WaitQueueOptions<Req, R>) {
    if (o.local && (o.graceMs > 0 || o.revoke || o.onDetach)) throw new Error(`wait queue ${o.name}: a local line keeps no place and hands nothing back`);
  }

  get name(): string {
    return this.o.name;
  }

  get codec(): WaitCodec<Req, R> | undefined {
    return this.o.codec;
  }

  get graceMs(): number {
    return this.o.graceMs;
  }

  /** Whether the lines are this daemon's alone, never stored (WaitQueueOptions.local). */
  get local(): boolean {
    return this.o.local === true;
  }

  /** Puts a new, detached waiter at the tail of each of its keys' lines. */
  enqueue(keys: string | readonly string[], req: Req, agentId?: string, opts: EnqueueOptions = {}): Waiter<Req, R> {
    const ks = typeof keys === "string" ? [keys] : [...keys];
    const w: Waiter<Req, R> = {
      id: ++this.o.sequences.waiter,
      keys: ks,
      key: ks[0]!,
      token: opts.token ?? newToken(),
      agentId,
      req,
      since: opts.since ?? this.o.clock.now(),
      order: ++this.o.sequences.order,
      attached: false,
    };
    this.link(w);
    return w;
  }

  /**
   * The waiter in line for exactly these keys that holds this wake_token, or else the one
   * this agent already has there: one agent never takes two places in one line.
   */
  find(token: string | undefined, keys: string | readonly string[], agentId?: string): Waiter<Req, R> | undefined {
    const ks = typeof keys === "string" ? [keys] : keys;
    if (token) {
      const w = this.byToken.get(token);
      if (w && sameKeys(w.keys, ks)) return w;
    }
    return agentId === undefined ? undefined : this.byAgent.get(agentKey(agentId, ks));
  }

  /** The waiter holding this wake_token, in whatever line. */
  get(token: string): Waiter<Req, R> | undefined {
    return this.byToken.get(token);
  }

  /** key's line, earliest first. */
  line(key: string): readonly Waiter<Req, R>[] {
    return this.lines.get(key) ?? [];
  }

  /**
   * Whether anyone stands in key's line, attached or not: here, or (on a shared store, where
   * memory may lag in a row body) on any daemon, as the rows say. A row body that finds nobody
   * may act as if the line were empty; one that finds somebody leaves the call to a line body.
   */
  *anyoneIn(key: string): Tx<boolean> {
    if (this.line(key).length > 0) return true;
    return this.storedLine ? yield* this.storedLine(key) : false;
  }

  /** The earliest waiter in key's line whose call is blocked now and whose client is still there. */
  firstAttached(key: string): Waiter<Req, R> | undefined {
    return this.line(key).find(isBlocked);
  }

  /** 1-based place in line (in key's line; the first key's by default). */
  position(w: Waiter<Req, R>, key: string = w.key): number {
    return this.line(key).indexOf(w) + 1;
  }

  /** The places this agent holds, in any line. */
  of(agentId: string): Iterable<Waiter<Req, R>> {
    return this.ofAgent.get(agentId) ?? [];
  }

  keys(): IterableIterator<string> {
    return this.lines.keys();
  }

  all(): IterableIterator<Waiter<Req, R>> {
    return this.byToken.values();
  }

  get size(): number {
    return this.byToken.size;
  }

  /**
   * Blocks the waiter's call until it is granted, the deadline passes, or the signal aborts
   * (the client went away). On timeout or abort it is detached and keeps its place. Called
   * inside the transaction that put it in line, so that no transaction in between (on a store
   * that answers after a round trip) finds it in line but not blocked, and passes it over.
   */
  block(w: Waiter<Req, R>, deadline: number, signal?: AbortSignal): Promise<Outcome<R>> {
    if (w.settle) w.settle({ kind: "aborted" }); // the same waiter blocking twice: the newer call wins
    this.adopt(w); // its call is here now, whichever daemon it waited on before
    this.o.scheduler.cancel(this.graceKey(w));
    w.graceEnds = undefined;
    return new Promise<Outcome<R>>((resolve) => {
      // The client leaving is handled in turn with transactions: one halfway through its
      // statements may be granting to this waiter, and a grant must find it as it left it. A
      // local line's grant hands nothing over: whichever comes first, the call is answered once.
      const onAbort = this.o.local ? () => this.detach(w, { kind: "aborted" }) : () => this.o.tx(() => this.detachTx(w), "detach");
      w.attached = true;
      w.signal = signal;
      this.changed(w);
      w.settle = (outcome) => {
        w.settle = undefined;
        w.attached = false;
        if (w.signal === signal) w.signal = undefined;
        this.changed(w);
        this.o.scheduler.cancel(this.deadlineKey(w));
        signal?.removeEventListener("abort", onAbort);
        resolve(outcome);
      };
      if (signal?.aborted) return this.detach(w, { kind: "aborted" });
      signal?.addEventListener("abort", onAbort, { once: true });
      const timeout = () => this.detach(w, { kind: "timeout" });
      if (this.o.local) this.o.scheduler.atOutside(this.deadlineKey(w), deadline, timeout);
      else this.o.scheduler.at(this.deadlineKey(w), deadline, timeout);
      if (signal) this.o.onBlock?.(this as WaitQueue<unknown, unknown>, w as Waiter<unknown, unknown>, signal);
    });
  }

  /**
   * Hands value to the waiter: it leaves its lines now, and its call is answered after commit.
   * If the call's client is gone by then, the call is answered as aborted and the queue's
   * `revoke` runs in a new transaction: the primitive takes the grant back and passes it on.
   * Another daemon's waiter is handed to the cluster, which writes the grant down for it.
   */
  grant(w: Waiter<Req, R>, value: R): void {
    this.unlink(w);
    this.o.scheduler.cancel(this.graceKey(w));
    if (w.daemon !== undefined) {
      w.attached = false;
      this.onForeignGrant?.(w as Waiter<unknown, unknown>, value);
      return;
    }
    const settle = w.settle;
    const signal = w.signal;
    w.settle = undefined;
    w.attached = false;
    this.o.scheduler.cancel(this.deadlineKey(w));
    if (!settle) return;
    this.o.sequences.handOffs++;
    const revoke = this.o.revoke;
    // If the granting transaction rolls back, the grant never happened: the call is answered
    // as aborted (its primitive reports the resource as held) rather than left hanging.
    this.o.afterCommit(
      () => {
        if (!signal?.aborted || !revoke) return settle({ kind: "granted", value });
        settle({ kind: "aborted" });
        this.o.tx(() => revoke(w, value), "hand-back");
      },
      () => settle({ kind: "aborted" }),
    );
  }

  /**
   * A detached waiter keeps its place for a fresh grace, or until `until` (a stored one). `called`:
   * its agent called (here), so this daemon keeps the place from now on, wherever it waited before.
   */
  keep(w: Waiter<Req, R>, called = false, until?: number): void {
    if (called) this.adopt(w);
    if (w.attached || !this.byToken.has(w.token) || this.o.graceMs <= 0) return;
    const ends = until ?? this.o.clock.now() + this.o.graceMs;
    if (w.graceEnds !== ends) {
      w.graceEnds = ends;
      this.onWaiterChanged?.(w);
    }
    this.o.scheduler.at(this.graceKey(w), ends, () => {
      if (this.byToken.get(w.token) !== w) return; // replaced by a reload since (a shared store)
      this.remove(w);
      return this.o.onExpire?.(w);
    });
  }

  /**
   * Its agent called here: the place is this daemon's from now on (a shared store), and its row
   * is written again (the call may have changed its request).
   */
  adopt(w: Waiter<Req, R>): void {
    w.daemon = undefined;
    this.onWaiterChanged?.(w);
  }

  /** The primitive changed w.req (a slot request's state, say): its row must be written again. */
  touch(w: Waiter<Req, R>): void {
    this.onWaiterChanged?.(w);
  }

  /**
   * Puts a waiter that left its lines (a revoked grant) back at its old place, detached; false
   * when its agent has meanwhile taken a newer place there (that one stays, and is not touched).
   */
  reinstate(w: Waiter<Req, R>): boolean {
    if (this.byToken.has(w.token)) return true;
    if (w.agentId !== undefined && this.byAgent.has(agentKey(w.agentId, w.keys))) return false;
    this.link(w);
    this.keep(w);
    return true;
  }

  /** Sends a waiter to the tail of its lines (a paused slot request rejoining). */
  moveToTail(w: Waiter<Req, R>): void {
    this.unlink(w);
    w.order = ++this.o.sequences.order;
    w.since = this.o.clock.now();
    this.link(w);
  }

  /** Takes the waiter out of line; a blocked call is answered as aborted. */
  remove(w: Waiter<Req, R>): void {
    this.unlink(w);
    this.o.scheduler.cancel(this.graceKey(w));
    w.settle?.({ kind: "aborted" });
  }

  /**
   * Takes the waiter out of line for good, as a detached one whose grace ended (the primitive's
   * onExpire runs: the next waiter may be served); a blocked call is answered as aborted.
   */
  *withdraw(w: Waiter<Req, R>): Tx<void> {
    this.remove(w);
    if (this.o.onExpire) yield* this.o.onExpire(w);
  }

  /** Removes every waiter, in any line, that matches. */
  removeWhere(pred: (w: Waiter<Req, R>) => boolean): Waiter<Req, R>[] {
    const doomed = [...this.byToken.values()].filter(pred);
    for (const w of doomed) this.remove(w);
    return doomed;
  }

  // ---- a store shared by several daemons (src/domain/cluster.ts) ----

  /**
   * A grant another daemon wrote down for this daemon's waiter w (it has left its lines there):
   * the blocked call is answered, or, if its client is gone, the grant is handed back here.
   */
  *deliver(w: Waiter<Req, R>, value: R): Tx<void> {
    const settle = w.settle;
    const aborted = w.signal?.aborted === true;
    this.unlink(w);
    this.o.scheduler.cancel(this.graceKey(w));
    this.o.scheduler.cancel(this.deadlineKey(w));
    w.settle = undefined;
    w.attached = false;
    if (settle && !aborted) {
      this.o.sequences.handOffs++;
      return settle({ kind: "granted", value });
    }
    settle?.({ kind: "aborted" });
    if (this.o.revoke) yield* this.o.revoke(w, value);
  }

  /** A grant to a daemon that died before answering it: taken back, as its client is gone. */
  *handBack(w: Waiter<Req, R>, value: R): Tx<void> {
    if (this.o.revoke) yield* this.o.revoke(w, value);
  }

  /**
   * The lines become exactly these (every daemon's waiters, earliest first), as another daemon
   * left them. This daemon's own waiters keep their objects (their blocked calls, and whether
   * they block, which only this daemon knows); one missing from the rows was taken out of
   * line elsewhere (its agent departed, a newer call on another daemon took its place) and
   * its call is answered as aborted. With `gone`, the rows are only the places that changed
   * since the last reload (a delta, docs/cluster.md "Catch-up by deltas": every other place
   * stays as it is) and `gone` the tokens of the places deleted meanwhile. False: a row of this
   * daemon's that memory does not hold (a failed transaction wrote it), which only a whole
   * reload settles (the caller's).
   */
  reload(rows: readonly SharedWaiter<Req>[], me: string, dead: ReadonlySet<string>, gone?: Iterable<string>): boolean {
    // The places the rows replace or remove: every place, or those the delta names.
    const out = gone === undefined ? [...this.byToken.values()] : [...new Set([...gone, ...rows.map((r) => r.token)])].flatMap((t) => this.byToken.get(t) ?? []);
    const mine = new Map<string, Waiter<Req, R>>();
    for (const w of out) {
      if (w.daemon === undefined) mine.set(w.token, w);
      else this.o.scheduler.cancel(this.graceKey(w)); // its row makes a new object, with its own grace
    }
    if (gone === undefined) {
      this.lines.clear();
      this.byToken.clear();
      this.byAgent.clear();
      this.ofAgent.clear();
    } else {
      for (const w of out) this.unlink(w); // each one is written down again, if its row differs (lines.ts)
    }
    let whole = true;
    for (const r of rows) {
      let w: Waiter<Req, R> | undefined;
      if (r.daemon === me) {
        w = mine.get(r.token);
        if (!w) {
          whole = false; // written by this daemon in a transaction that then failed
          continue;
        }
        mine.delete(r.token);
        Object.assign(w, { req: r.req, order: r.order, since: r.since });
      } else {
        const { keys, token, agentId, req, since, order, daemon, graceEnds } = r;
        w = { id: ++this.o.sequences.waiter, keys, key: keys[0]!, token, agentId, req, since, order, attached: r.attached && !dead.has(daemon), daemon, graceEnds };
      }
      if (r.order > this.o.sequences.order) this.o.sequences.order = r.order;
      this.link(w);
    }
    for (const w of mine.values()) {
      this.o.scheduler.cancel(this.graceKey(w));
      w.settle?.({ kind: "aborted" });
    }
    this.o.onChange?.();
    return whole || gone === undefined;
  }

  /** A waiter of a daemon that has left leaves the line, as a detached one whose grace ended. */
  *expireForeign(w: Waiter<Req, R>): Tx<void> {
    this.unlink(w);
    if (this.o.onExpire) yield* this.o.onExpire(w);
  }

  /** Shutdown: every blocked call is answered as aborted and the lines are emptied. */
  clear(): void {
    for (const w of [...this.byToken.values()]) this.remove(w);
  }

  private *detachTx(w: Waiter<Req, R>): Tx<void> {
    this.detach(w, { kind: "aborted" });
  }

  private detach(w: Waiter<Req, R>, outcome: Outcome<R>): void {
    w.settle?.(outcome);
    if (!this.byToken.has(w.token)) return;
    if (this.o.graceMs <= 0) this.remove(w);
    else this.keep(w);
    const onDetach = this.o.onDetach;
    if (onDetach) this.o.tx(() => onDetach(w), "detach");
  }

  /** Inserts w into each of its lines by arrival order (at the tail, unless reinstated). */
  private link(w: Waiter<Req, R>): void {
    this.changed(w);
    if (w.agentId !== undefined) {
      const k = agentKey(w.agentId, w.keys);
      const other = this.byAgent.get(k);
      if (other && other !== w) this.remove(other); // never two places for one agent
      this.byAgent.set(k, w);
      let mine = this.ofAgent.get(w.agentId);
      if (!mine) this.ofAgent.set(w.agentId, (mine = new Set()));
      mine.add(w);
    }
    this.byToken.set(w.token, w);
    for (const key of w.keys) {
      let line = this.lines.get(key);
      if (!line) this.lines.set(key, (line = []));
      let i = line.length;
      while (i > 0 && line[i - 1]!.order > w.order) i--;
      line.splice(i, 0, w);
    }
  }

  private unlink(w: Waiter<Req, R>): void {
    if (!this.byToken.delete(w.token)) return;
    this.changed(w);
    if (w.agentId !== undefined) {
      const k = agentKey(w.agentId, w.keys);
      if (this.byAgent.get(k) === w) this.byAgent.delete(k);
      const mine = this.ofAgent.get(w.agentId);
      mine?.delete(w);
      if (mine?.size === 0) this.ofAgent.delete(w.agentId);
    }
    for (const key of w.keys) {
      const line = this.lines.get(key);
      if (!line) continue;
      const i = line.indexOf(w);
      if (i >= 0) line.splice(i, 1);
      if (line.length === 0) this.lines.delete(key);
    }
  }

  /** A line changed: the dashboard's listeners, and the lines' write-down. */
  private changed(w: Waiter<Req, R>): void {
    this.o.onChange?.();
    this.onWaiterChanged?.(w);
  }

  private deadlineKey(w: Waiter<Req, R>): string {
    return `${this.o.name}:wait:${w.id}`;
  }

  private graceKey(w: Waiter<Req, R>): string {
    return `${this.o.name}:grace:${w.id}`;
  }
}
