// Call tasks: the stored side of the MCP tasks extension (src/mcp/call-tasks.ts runs the calls).
// A call task is a blocking tool call that waits on in the daemon after its client was given a
// handle. Its waiting is the one mechanism's (wait.ts): its call stands in line like any blocked
// call. What is kept here is what outlives the call's HTTP request: the row in `call_tasks`
// (written before the handle is answered, so it survives a restart), its status, its result
// for ttlMs after it finished, and the journal's record of each step. A finished task whose
// result nobody fetched is dropped when its ttl ends, and its hand-back (what it was granted
// goes back, as for a client that left) is the MCP layer's, told through onExpired.
// Journal: call_task.created, call_task.completed, call_task.cancelled, call_task.expired.
import { all, get, run, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";

export type CallTaskStatus = "working" | "completed" | "cancelled";

export interface CallTaskRow {
  task_id: string;
  tool: string;
  args: string;
  status: CallTaskStatus;
  result: string | null;
  queue: string | null;
  wake_token: string | null;
  daemon: string;
  created_at: number;
  updated_at: number;
  deadline: number;
  ttl_ms: number;
  poll_ms: number;
  expires_at: number | null;
  fetched: boolean | number;
}

export interface NewCallTask {
  taskId: string;
  tool: string;
  args: unknown;
  queue: string | undefined;
  wakeToken: string | undefined;
  daemon: string;
  deadline: number;
  ttlMs: number;
  pollMs: number;
}

/** What onStatus listeners hear: a task's new status, on this daemon's change. */
export interface CallTaskStatusEvent {
  taskId: string;
  status: CallTaskStatus | "expired";
  row: CallTaskRow | undefined;
}

const COLUMNS = "task_id, tool, args, status, result, queue, wake_token, daemon, created_at, updated_at, deadline, ttl_ms, poll_ms, expires_at, fetched";

/** A row as both stores give it: numbers as numbers (PostgreSQL's BIGINT may come back as a string). */
function normal(r: CallTaskRow | null): CallTaskRow | null {
  if (!r) return null;
  return {
    ...r,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    deadline: Number(r.deadline),
    ttl_ms: Number(r.ttl_ms),
    poll_ms: Number(r.poll_ms),
    expires_at: r.expires_at === null ? null : Number(r.expires_at),
    fetched: Boolean(r.fetched),
  };
}

export class CallTasks {
  private readonly listeners = new Set<(e: CallTaskStatusEvent) => void>();
  /** Set by the MCP layer: hands back what an unfetched, expired task was granted. */
  onExpired: ((row: CallTaskRow) => void) | undefined;

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {}

  /** Subscribes to status changes made on this daemon (the listen stream's notifications/tasks/status). */
  onStatus(fn: (e: CallTaskStatusEvent) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** How many onStatus listeners are subscribed (a closed listen stream must leave none behind). */
  get listening(): number {
    return this.listeners.size;
  }

  /** Stores a new working task: in the transaction the caller awaits before answering the handle. */
  *create(t: NewCallTask): Tx<CallTaskRow> {
    const now = this.c.clock.now();
    yield* run(
      `INSERT INTO call_tasks (${COLUMNS}) VALUES (?, ?, ?, 'working', NULL, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
      t.taskId,
      t.tool,
      JSON.stringify(t.args),
      t.queue ?? null,
      t.wakeToken ?? null,
      t.daemon,
      now,
      now,
      t.deadline,
      t.ttlMs,
      t.pollMs,
      false,
    );
    yield* this.journal.record("call_task.created", t.taskId, { data: { tool: t.tool, queue: t.queue } });
    const row = (yield* this.get(t.taskId))!;
    this.announce(row.task_id, "working", row);
    return row;
  }

  *get(taskId: string): Tx<CallTaskRow | null> {
    return normal(yield* get<CallTaskRow>(`SELECT ${COLUMNS} FROM call_tasks WHERE task_id = ?`, taskId));
  }

  /** Its call now stands in this place (a resumed call may hold a new one). */
  *place(taskId: string, queue: string, wakeToken: string): Tx<void> {
    yield* run("UPDATE call_tasks SET queue = ?, wake_token = ? WHERE task_id = ? AND status = 'working'", queue, wakeToken, taskId);
  }

  /** A tasks/get read the finished result: it is no longer handed back at expiry. */
  *markFetched(taskId: string): Tx<void> {
    yield* run("UPDATE call_tasks SET fetched = ? WHERE task_id = ? AND status = 'completed'", true, taskId);
  }

  /** Its call answered: the result is kept for ttlMs. False when the task was no longer working (cancelled). */
  *complete(taskId: string, result: unknown): Tx<boolean> {
    const now = this.c.clock.now();
    const r = yield* run(
      "UPDATE call_tasks SET status = 'completed', result = ?, updated_at = ?, expires_at = ? + ttl_ms WHERE task_id = ? AND status = 'working'",
      JSON.stringify(result),
      now,
      now,
      taskId,
    );
    if (r.changes === 0) return false;
    yield* this.journal.record("call_task.completed", taskId);
    const row = (yield* this.get(taskId))!;
    this.arm(row);
    this.announce(taskId, "completed", row);
    return true;
  }

  /**
   * Withdraws a working task's wait: its place leaves its line (the next waiter may be served),
   * its blocked call, on whichever daemon, is answered as aborted, and it reads `cancelled` for
   * ttlMs. A finished task is left as it is. Null: no such task.
   */
  *cancel(taskId: string): Tx<CallTaskRow | null> {
    const row = yield* this.get(taskId);
    if (!row || row.status !== "working") return row;
    const now = this.c.clock.now();
    yield* run("UPDATE call_tasks SET status = 'cancelled', updated_at = ?, expires_at = ? + ttl_ms WHERE task_id = ?", now, now, taskId);
    if (row.queue && row.wake_token) {
      const q = this.c.queues.get(row.queue);
      const w = q?.get(row.wake_token);
      if (q && w) yield* q.withdraw(w);
    }
    yield* this.journal.record("call_task.cancelled", taskId);
    const after = (yield* this.get(taskId))!;
    this.arm(after);
    this.announce(taskId, "cancelled", after);
    return after;
  }

  /** Working tasks of this daemon (at start: those the last run left waiting). */
  *working(daemon: string): Tx<CallTaskRow[]> {
    const rows = yield* all<CallTaskRow>(`SELECT ${COLUMNS} FROM call_tasks WHERE status = 'working' AND daemon = ? ORDER BY created_at`, daemon);
    return rows.map((r) => normal(r)!);
  }

  /**
   * A shared store: working tasks whose daemon has no recent heartbeat (it stopped, or died),
   * for a live daemon to take over.
   */
  *orphans(me: string, live: ReadonlySet<string>): Tx<CallTaskRow[]> {
    const rows = yield* all<CallTaskRow>(`SELECT ${COLUMNS} FROM call_tasks WHERE status = 'working' AND daemon <> ? ORDER BY created_at`, me);
    return rows.filter((r) => !live.has(r.daemon)).map((r) => normal(r)!);
  }

  /** Takes a task over from a daemon that left; false when another daemon took it first. */
  *adopt(taskId: string, from: string, me: string): Tx<boolean> {
    return (yield* run("UPDATE call_tasks SET daemon = ? WHERE task_id = ? AND daemon = ? AND status = 'working'", me, taskId, from)).changes === 1;
  }

  /** At start: every finished task's drop is armed again (a drop that fell due runs at once). */
  *armAll(): Tx<void> {
    for (const r of yield* all<CallTaskRow>(`SELECT ${COLUMNS} FROM call_tasks WHERE status <> 'working'`)) this.arm(normal(r)!);
  }

  private arm(row: CallTaskRow): void {
    if (row.expires_at === null) return;
    const id = row.task_id;
    this.c.store.afterCommit(() => this.c.scheduler.at(`call-task:${id}`, row.expires_at!, () => this.expire(id)));
  }

  /** The ttl of a finished task ended: it is dropped, and an unfetched result's grant handed back. */
  private *expire(taskId: string): Tx<void> {
    const row = yield* this.get(taskId);
    if (!row || row.expires_at === null || row.expires_at > this.c.clock.now()) return; // gone, or renewed elsewhere
    // Only the daemon whose delete removed the row hands back (each daemon arms every drop at its start).
    if ((yield* run("DELETE FROM call_tasks WHERE task_id = ? AND updated_at = ? AND fetched = ?", taskId, row.updated_at, row.fetched)).changes === 0) return;
    const unfetched = row.status === "completed" && !row.fetched;
    yield* this.journal.record("call_task.expired", taskId, { data: { unfetched } });
    this.announce(taskId, "expired", undefined);
    if (unfetched) {
      const handBack = this.onExpired;
      if (handBack) this.c.store.afterCommit(() => handBack(row));
    }
  }

  private announce(taskId: string, status: CallTaskStatusEvent["status"], row: CallTaskRow | undefined): void {
    if (this.listeners.size === 0) return;
    this.c.store.afterCommit(() => {
      for (const fn of this.listeners) fn({ taskId, status, row });
    });
  }
}
