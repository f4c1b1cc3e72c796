// A leased task queue. claim_next_task hands out the highest-priority, oldest pending task
// with a lease; a lease that lapses requeues the task at the lease's exact end (delivery is
// at-least-once). A claimant that never registered is bound by its lease alone; a registered
// claimant that departs loses its claims at once. Tasks that fail or lapse max_attempts times
// go to state 'failed' (a dead letter) instead of looping forever.
// Journal: task.pushed, task.claimed, task.renewed, task.completed, task.failed (to the dead
// letter or not requeued), task.requeued (back to pending), task.expired (a lease lapsed; its
// `state` says whether the task went back to pending or to failed). Payloads are not copied.
import { AirlockError } from "../errors.ts";
import { all, type Condition, get, last, run, runLater, type SQLQueryBindings, type Tx } from "../store/tx.ts";
import { assertTtl, type Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";
import { rowsSince } from "./row-versions.ts";
import { deadlineOf } from "./timers.ts";
import { newToken } from "./tokens.ts";
import type { WaitQueue } from "./wait.ts";
import type { Outcome } from "./waiter.ts";

/** A task stored, pending (a push's, insert and insertAlone): its queue, payload, author, priority, attempts, and when. */
const PUSH = "INSERT INTO tasks (queue, payload, author, priority, state, max_attempts, created_at) SELECT ?, ?, ?, CAST(? AS BIGINT), 'pending', CAST(? AS BIGINT), CAST(? AS BIGINT)";
/** A claim of the best pending task of a queue (claimOne): its lease, then the queue. */
const CLAIM_BEST =
  "UPDATE tasks SET state = 'claimed', lease_agent = ?, lease_token = ?, lease_expires_at = ?, attempts = attempts + 1 " +
  "WHERE id = (SELECT id FROM tasks WHERE queue = ? AND state = 'pending' ORDER BY priority DESC, id LIMIT 1) AND state = 'pending'";

/** One pending task of a queue, if any (anyPending). */
const PENDING_ONE = "SELECT id FROM tasks WHERE queue = ? AND state = 'pending' LIMIT 1";

// Finished tasks stay visible in list_tasks for a week, then are purged so the table does
// not grow without bound on a queue that runs for months.
export const TASK_RETENTION_MS = 7 * 24 * 3600 * 1000;

export type TaskState = "pending" | "claimed" | "done" | "failed";

export interface TaskRow {
  id: number;
  queue: string;
  payload: string;
  author: string | null;
  priority: number;
  state: TaskState;
  attempts: number;
  max_attempts: number | null;
  lease_agent: string | null;
  lease_token: string | null;
  lease_expires_at: number | null;
  created_at: number;
  finished_at: number | null;
}

export type ClaimResult =
  | { claimed: true; id: number; payload: string; leaseToken: string; leaseExpiresAt: number; attempts: number }
  | { claimed: false };

export interface PushRequest {
  queue: string;
  payload: string;
  author?: string | undefined;
  priority: number;
  maxAttempts?: number | undefined;
}

export type TaskRenewResult = { renewed: true; expiresAt: number } | { renewed: false; error: string };

interface ClaimWait {
  agentId: string;
  leaseMs: number;
}

export class Tasks {
  // Claimers blocked on an empty queue; no wake_token, a returned claimer simply calls again.
  readonly waits: WaitQueue<ClaimWait, ClaimResult>;

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
  ) {
    this.waits = c.waitQueue("task", 0, { revoke: (_w, g) => this.unclaim(g) });
  }

  /**
   * At start: leases re-armed, and the purge of finished tasks (createKernel runs every
   * primitive's load); with `since` (a catch-up by deltas), only the tasks stamped above it, an
   * ended lease's timer cancelled.
   */
  *load(since: number | null = null): Tx<void> {
    for (const t of yield* rowsSince<TaskRow>("tasks", since, "state = 'claimed'")) {
      if (t.state === "claimed") this.arm(t.id, t.lease_expires_at!, true);
      else this.c.scheduler.cancel(`task:${t.id}`);
    }
    yield* this.armPurge();
  }

  async push(req: PushRequest): Promise<number> {
    // A row body when no claimer waits on the queue (docs/cluster.md, "Scaling out"): one insert
    // and its journal entry. A claimer in line needs the line body, which hands the task over.
    const tried = this.c.rowIfNobody(this.waits, "tasks", req.queue, (nobody) => this.insertAlone(req, nobody));
    return (tried && (await tried)) ?? this.c.tx(() => this.pushTx(req));
  }

  /**
   * A push with no claimer in the queue's line, as a row body: the task stored only if no stored
   * place stands in its line, a condition of its one insert, the body's last statement, whose
   * entry takes the id from the row (docs/cluster.md, "A row batch in one flight"). Null: a
   * claimer waits, and the line body hands the task over.
   */
  private *insertAlone(req: PushRequest, nobody: Condition): Tx<number | null> {
    // The same text as insert's entry: {"id":N,"priority":P}.
    const entry = { data: `'{"id":' || id || ?`, args: [`,"priority":${JSON.stringify(req.priority)}}`] };
    const sql = `${PUSH} WHERE ${nobody.sql} RETURNING id`;
    return (yield* this.journal.lastRecorded<{ id: number }>("task.pushed", req.queue, entry, { agentId: req.author }, sql, ...this.pushArgs(req), ...nobody.args))?.id ?? null;
  }

  private *pushTx(req: PushRequest): Tx<number> {
    const id = yield* this.insert(req);
    yield* this.offer(req.queue);
    return id;
  }

  /** PUSH's values. */
  private pushArgs(req: PushRequest): SQLQueryBindings[] {
    return [req.queue, req.payload, req.author ?? null, req.priority, req.maxAttempts ?? null, this.c.clock.now()];
  }

  /** The task stored, pending, and journalled: all a push does when nobody waits to claim. */
  private *insert(req: PushRequest): Tx<number> {
    const row = (yield* get<{ id: number }>(`${PUSH} RETURNING id`, ...this.pushArgs(req)))!;
    yield* this.journal.record("task.pushed", req.queue, { agentId: req.author, data: { id: row.id, priority: req.priority } });
    return row.id;
  }

  async claim(queue: string, agentId: string, leaseMs: number, waitMs: number, signal?: AbortSignal): Promise<ClaimResult> {
    assertTtl(leaseMs);
    // A row body when no claimer waits on the queue (docs/cluster.md, "Scaling out"): the best
    // pending task taken in one statement. It answers unless it lost a race for a task or finds
    // none to wait for; then the line body decides, as it always did.
    const tried = this.c.rowIfNobody(this.waits, "tasks", queue, (nobody) => this.claimRow(queue, agentId, leaseMs, waitMs, nobody));
    const alone = tried && (await tried);
    if (alone?.claimed) return alone;
    // Nothing taken and the call would not wait: it answers so if nothing is pending now (the
    // claim may have lost a race for the one it picked), in a read of its own after the claim's
    // flight; a task pending goes to the line body, which claims exactly.
    if (alone && !(await this.c.rowRead("tasks", queue, () => this.anyPending(queue)))) return alone;
    const first = await this.c.tx(() => this.claimTx(queue, agentId, leaseMs, waitMs, signal));
    if ("claimed" in first) return first;
    const outcome = await first.blocked;
    if (outcome.kind === "granted") return outcome.value;
    if (outcome.kind === "aborted") return { claimed: false };
    return this.c.tx(() => this.claimOne(queue, agentId, leaseMs));
  }

  private *claimTx(queue: string, agentId: string, leaseMs: number, waitMs: number, signal?: AbortSignal): Tx<ClaimResult | { blocked: Promise<Outcome<ClaimResult>> }> {
    const got = yield* this.claimOne(queue, agentId, leaseMs);
    if (got.claimed || waitMs <= 0) return got;
    return { blocked: this.waits.block(this.waits.enqueue(queue, { agentId, leaseMs }, agentId), this.c.clock.now() + waitMs, signal) };
  }

  async complete(id: number, leaseToken: string): Promise<boolean> {
    // A row body (docs/cluster.md, "Scaling out"): one conditional update of the task's row and
    // its journal entry; a finished task goes to nobody in line. Timers change after the commit.
    // A lease that lapsed but has not been expired yet (its timer was armed on another daemon)
    // is left to the line body, which expires it first and then refuses, as one daemon does.
    const done = await this.c.rowTx("tasks", String(id), () => this.completeRow(id, leaseToken));
    return done ?? (await this.c.tx(() => this.completeTx(id, leaseToken, false))) === true;
  }

  /**
   * A live lease completed as its body's last statement, its entry going with it (the queue and
   * the worker the row gives): a batch of completions commits in the flight that carries it
   * (docs/cluster.md, "A row batch in one flight"). Null when the lease is not live (the line
   * body decides). With no purge armed here, the completion looks the oldest finished task up
   * first, as a line body does (completeTx).
   */
  private *completeRow(id: number, leaseToken: string): Tx<boolean | null> {
    if (!this.c.scheduler.has("tasks:purge")) return yield* this.completeTx(id, leaseToken, true);
    const now = this.c.clock.now();
    const entry = { data: "?", args: [JSON.stringify({ id })], resource: "queue", agentId: "lease_agent" };
    if (!(yield* this.journal.lastRecorded("task.completed", "", entry, {}, COMPLETE, now, id, leaseToken, now))) return null;
    this.c.store.afterCommit(() => this.c.scheduler.cancel(`task:${id}`));
    return true;
  }

  /** `live`: only a lease still live, else null (the line body decides); else a due expiry first. */
  private *completeTx(id: number, leaseToken: string, live: boolean): Tx<boolean | null> {
    const now = this.c.clock.now();
    if (!live) yield* this.claimedRow(id); // a lapse that is due, expired first
    const r = yield* get<{ queue: string; lease_agent: string | null }>(COMPLETE, now, id, leaseToken, now);
    if (!r) return live ? null : false;
    yield* this.journal.record("task.completed", r.queue, { agentId: r.lease_agent, data: { id } });
    this.c.store.afterCommit(() => this.c.scheduler.cancel(`task:${id}`));
    yield* this.armPurge();
    return true;
  }

  async fail(id: number, leaseToken: string, requeue: boolean): Promise<boolean> {
    // On a shared store a row body first (docs/cluster.md, "Scaling out"): the lease's row
    // locked and settled; a task that goes back to pending while a claimer stands in the queue's
    // line (on any daemon), or a lease that lapsed unexpired, is left to the line body.
    const settled = this.c.rowsOverlap ? await this.c.rowTx("tasks", String(id), () => this.failRow(id, leaseToken, requeue)) : null;
    return settled ?? this.c.tx(() => this.failTx(id, leaseToken, requeue));
  }

  private *failTx(id: number, leaseToken: string, requeue: boolean): Tx<boolean> {
    const t = yield* this.claimedRow(id);
    if (!t || t.lease_token !== leaseToken) return false;
    yield* this.release(t, requeue, requeue ? "task.requeued" : "task.failed", "fail_task");
    return true;
  }

  /** fail_task as a row body: the row locked first (two failures of one lease are ordered by it). */
  private *failRow(id: number, leaseToken: string, requeue: boolean): Tx<boolean | null> {
    const t = yield* get<TaskRow>("SELECT * FROM tasks WHERE id = ? AND lease_token = ? AND state = 'claimed' AND lease_expires_at > ? FOR UPDATE", id, leaseToken, this.c.clock.now());
    if (!t || (requeue && this.goesBack(t) && (yield* this.waits.anyoneIn(t.queue)))) return null;
    yield* this.settle(t, requeue, requeue ? "task.requeued" : "task.failed", "fail_task");
    return true;
  }

  async renew(id: number, leaseToken: string, leaseMs: number): Promise<TaskRenewResult> {
    assertTtl(leaseMs);
    // A lease held live by this token moves in place: a row body on a shared store (a renewal
    // hands nothing on, and it is a worker's heartbeat). Else the line body says why not.
    const moved = this.c.rowsOverlap && (await this.c.rowTx("tasks", String(id), () => this.renewRow(id, leaseToken, leaseMs)));
    return moved || this.c.tx(() => this.renewTx(id, leaseToken, leaseMs));
  }

  /**
   * Its last statement, its entry going with it (the queue and the worker the row gives): a
   * batch of renewals commits in the flight that carries it (docs/cluster.md, "A row batch in
   * one flight").
   */
  private *renewRow(id: number, leaseToken: string, leaseMs: number): Tx<TaskRenewResult | null> {
    const now = this.c.clock.now();
    const expiresAt = now + leaseMs;
    const entry = { data: "?", args: [JSON.stringify({ id, expires_at: expiresAt })], resource: "queue", agentId: "lease_agent" };
    const sql = "UPDATE tasks SET lease_expires_at = ? WHERE id = ? AND lease_token = ? AND state = 'claimed' AND lease_expires_at > ? RETURNING queue, lease_agent";
    if (!(yield* this.journal.lastRecorded("task.renewed", "", entry, {}, sql, expiresAt, id, leaseToken, now))) return null;
    this.c.store.afterCommit(() => this.arm(id, expiresAt));
    return { renewed: true, expiresAt };
  }

  private *renewTx(id: number, leaseToken: string, leaseMs: number): Tx<TaskRenewResult> {
    const t = yield* this.claimedRow(id);
    if (!t) return { renewed: false, error: "store: task not claimed" };
    if (t.lease_token !== leaseToken) return { renewed: false, error: "store: task not owned by supplied lease_token" };
    const expiresAt = this.c.clock.now() + leaseMs;
    yield* runLater("UPDATE tasks SET lease_expires_at = ? WHERE id = ?", expiresAt, id);
    return yield* this.renewed(id, t, expiresAt);
  }

  /** What follows moving a lease's expiry: its timer (after the commit), and the record. */
  private *renewed(id: number, t: { queue: string; lease_agent: string | null }, expiresAt: number): Tx<TaskRenewResult> {
    this.c.store.afterCommit(() => this.arm(id, expiresAt));
    yield* this.journal.record("task.renewed", t.queue, { agentId: t.lease_agent, data: { id, expires_at: expiresAt } });
    return { renewed: true, expiresAt };
  }

  async list(queue: string): Promise<TaskRow[]> {
    return this.c.rowRead("tasks", queue, () => all<TaskRow>("SELECT * FROM tasks WHERE queue = ? ORDER BY id", queue));
  }

  async claimedBy(agentId: string): Promise<number[]> {
    return this.c.rowRead("tasks", "", () => this.claimedByTx(agentId));
  }

  *claimedByTx(agentId: string): Tx<number[]> {
    const rows = yield* all<{ id: number }>("SELECT id FROM tasks WHERE lease_agent = ? AND state = 'claimed' ORDER BY id", agentId);
    return rows.map((r) => r.id);
  }

  /** Whether the agent holds a claim or is blocked claiming (the messages' "seen"; the journal keeps the rest). */
  *knows(agentId: string): Tx<boolean> {
    for (const w of this.waits.all()) if (w.req.agentId === agentId) return true;
    return (yield* this.claimedByTx(agentId)).length > 0;
  }

  /** The claimant of task ID now (send_message's `about: task:ID`). */
  *holders(id: string): Tx<string[]> {
    if (!/^[1-9][0-9]{0,15}$/.test(id)) throw new AirlockError("invalid_argument", `about: task:ID needs a task id, a whole number >= 1 (got ${JSON.stringify(id)})`);
    const t = yield* get<{ lease_agent: string | null }>("SELECT lease_agent FROM tasks WHERE id = ? AND state = 'claimed'", Number(id));
    return t?.lease_agent ? [t.lease_agent] : [];
  }

  /** Presence hook: a departed claimant loses its claims at once. */
  *requeueClaimsOf(agentId: string): Tx<number[]> {
    const rows = yield* all<TaskRow>("SELECT * FROM tasks WHERE lease_agent = ? AND state = 'claimed' ORDER BY id", agentId);
    for (const t of rows) yield* this.release(t, true, "task.requeued", "claimant departed");
    return rows.map((t) => t.id);
  }

  /**
   * The best pending task (highest priority, then oldest), taken in one statement, in a line body
   * (a row body's is claimRow): its lease timer armed after the commit.
   */
  private *claimOne(queue: string, agentId: string, leaseMs: number): Tx<ClaimResult> {
    const leaseToken = newToken();
    const leaseExpiresAt = this.c.clock.now() + leaseMs;
    const t = yield* get<TaskRow>(`${CLAIM_BEST} RETURNING *`, agentId, leaseToken, leaseExpiresAt, queue);
    if (!t) return { claimed: false };
    yield* this.journal.record("task.claimed", queue, { agentId, data: { id: t.id, attempt: t.attempts, expires_at: leaseExpiresAt } });
    return this.claimed(t, leaseToken, leaseExpiresAt);
  }

  /** A task claimed: its lease timer armed after the commit (a row body may run again), and the answer. */
  private claimed(t: TaskRow, leaseToken: string, leaseExpiresAt: number): ClaimResult {
    this.c.store.afterCommit(() => this.arm(t.id, leaseExpiresAt));
    return { claimed: true, id: t.id, payload: t.payload, leaseToken, leaseExpiresAt, attempts: t.attempts };
  }

  /**
   * A claim as a row body, when no stored place stands in the queue's line (`nobody`, a condition
   * of its update: a claimer in line comes first): the update and its entry, whose attempt the
   * row gives, are the body's last statement, so its batch commits in one flight (docs/cluster.md,
   * "A row batch in one flight"). Beside other daemons' row bodies two claims may pick the same
   * task: PostgreSQL makes the second wait for the first's row lock, then finds the task no
   * longer pending and takes nothing. So nothing taken is final only when nothing is pending and
   * the call would not wait ({claimed: false}: claim looks, after the commit); a call that would
   * wait gets null, and the line body claims (or blocks) exactly.
   */
  private *claimRow(queue: string, agentId: string, leaseMs: number, waitMs: number, nobody: Condition): Tx<ClaimResult | null> {
    const leaseToken = newToken();
    const leaseExpiresAt = this.c.clock.now() + leaseMs;
    // The same text as claimOne's entry: {"id":N,"attempt":A,"expires_at":T}.
    const entry = { data: `'{"id":' || id || ',"attempt":' || attempts || ?`, args: [`,"expires_at":${leaseExpiresAt}}`] };
    const sql = `${CLAIM_BEST} AND ${nobody.sql} RETURNING *`;
    const t = yield* this.journal.lastRecorded<TaskRow>("task.claimed", queue, entry, { agentId }, sql, agentId, leaseToken, leaseExpiresAt, queue, ...nobody.args);
    if (t) return this.claimed(t, leaseToken, leaseExpiresAt);
    return waitMs > 0 ? null : { claimed: false };
  }

  /** Whether a task of the queue is pending: a look that ends its body (last(): its batch may commit in its flight). */
  private *anyPending(queue: string): Tx<boolean> {
    return (yield* last<{ id: number }>([], PENDING_ONE, queue)) !== null;
  }

  /**
   * Ends a claim: back to pending (and to a blocked claimer), or to 'failed' when out of
   * attempts. `kind` is what it journals when requeued (task.failed when it goes to failed,
   * unless the kind is task.expired, which reports the new state in its data).
   */
  private *release(t: TaskRow, requeue: boolean, kind: "task.requeued" | "task.failed" | "task.expired", reason: string): Tx<void> {
    if (yield* this.settle(t, requeue, kind, reason)) yield* this.offer(t.queue);
  }

  /** Whether a claim ended with a requeue goes back to pending (attempts left). */
  private goesBack(t: TaskRow): boolean {
    return t.max_attempts === null || t.attempts < t.max_attempts;
  }

  /**
   * The row and the record of a claim that ends (release), its timer cancelled after the
   * commit: whether the task went back to pending (then a claimer in line is owed it).
   */
  private *settle(t: TaskRow, requeue: boolean, kind: "task.requeued" | "task.failed" | "task.expired", reason: string): Tx<boolean> {
    this.c.store.afterCommit(() => this.c.scheduler.cancel(`task:${t.id}`));
    const exhausted = !this.goesBack(t);
    const back = requeue && !exhausted;
    const recorded = kind === "task.expired" ? kind : back ? "task.requeued" : "task.failed";
    const data: Record<string, unknown> = { id: t.id, attempts: t.attempts, state: back ? "pending" : "failed" };
    yield* this.journal.record(recorded, t.queue, { agentId: t.lease_agent, reason: exhausted && requeue ? `${reason}; out of attempts` : reason, data });
    if (back) {
      yield* run("UPDATE tasks SET state = 'pending', lease_agent = NULL, lease_token = NULL, lease_expires_at = NULL WHERE id = ?", t.id);
    } else {
      yield* run("UPDATE tasks SET state = 'failed', lease_token = NULL, lease_expires_at = NULL, finished_at = ? WHERE id = ?", this.c.clock.now(), t.id);
      yield* this.armPurge();
    }
    return back;
  }

  /** Hands pending tasks to claimers blocked on this queue, earliest first. */
  private *offer(queue: string): Tx<void> {
    for (let w = this.waits.firstAttached(queue); w; w = this.waits.firstAttached(queue)) {
      const got = yield* this.claimOne(queue, w.req.agentId, w.req.leaseMs);
      if (!got.claimed) return;
      this.waits.grant(w, got);
    }
  }

  /** A claim handed to a call whose client was gone: the task goes back, its attempt uncounted. */
  private *unclaim(got: ClaimResult): Tx<void> {
    if (!got.claimed) return;
    const t = yield* get<TaskRow>("SELECT * FROM tasks WHERE id = ? AND lease_token = ? AND state = 'claimed'", got.id, got.leaseToken);
    if (!t) return;
    this.c.scheduler.cancel(`task:${t.id}`);
    yield* run("UPDATE tasks SET state = 'pending', lease_agent = NULL, lease_token = NULL, lease_expires_at = NULL, attempts = attempts - 1 WHERE id = ?", t.id);
    yield* this.journal.record("task.requeued", t.queue, {
      agentId: t.lease_agent,
      reason: "the claimer's client left before the claim reached it",
      data: { id: t.id, attempts: t.attempts - 1, state: "pending" },
    });
    yield* this.offer(t.queue);
  }

  /** `fromRows`: read from rows another daemon may have written, whose timer fires it first (Scheduler.at's look). */
  private arm(id: number, expiresAt: number, fromRows = false): void {
    const self = this;
    const look = fromRows ? deadlineOf("SELECT lease_expires_at AS at FROM tasks WHERE id = ? AND state = 'claimed'", id) : undefined;
    this.c.scheduler.at(
      `task:${id}`,
      expiresAt,
      function* () {
        yield* self.claimedRow(id);
      },
      look,
    );
  }

  /**
   * The task's row while it is claimed. A lease past its expiry is expired here first (then
   * null): the timer's work, and what a line body on the lease reads it with (the timer may be
   * armed only on the daemon that claimed it, which may be slow or dead).
   */
  private *claimedRow(id: number): Tx<TaskRow | null> {
    const t = yield* get<TaskRow>("SELECT * FROM tasks WHERE id = ? AND state = 'claimed'", id);
    if (!t || t.lease_expires_at! > this.c.clock.now()) return t;
    yield* this.release(t, true, "task.expired", "lease lapsed");
    return null;
  }

  /**
   * The purge armed for the oldest finished task, unless one is armed already (it re-arms itself
   * when it runs): the oldest is looked up only then, not at every completion (the lookup reads
   * every task; a queue that runs for a week holds many). Armed after the commit (a row body may
   * run again). A purge that finds nothing due deletes nothing.
   */
  private *armPurge(): Tx<void> {
    if (this.c.scheduler.has("tasks:purge")) return;
    const row = yield* get<{ at: number | null }>("SELECT MIN(finished_at) AS at FROM tasks WHERE finished_at IS NOT NULL");
    if (row?.at == null) return;
    const at = row.at + TASK_RETENTION_MS;
    this.c.store.afterCommit(() => {
      if (!this.c.scheduler.has("tasks:purge")) this.c.scheduler.at("tasks:purge", at, () => this.purge());
    });
  }

  private *purge(): Tx<void> {
    yield* run("DELETE FROM tasks WHERE finished_at IS NOT NULL AND finished_at <= ?", this.c.clock.now() - TASK_RETENTION_MS);
    yield* this.armPurge();
  }
}

/** A live lease's task marked done (its finish, its id, its lease token, now): its queue and worker returned. */
const COMPLETE =
  "UPDATE tasks SET state = 'done', lease_token = NULL, lease_expires_at = NULL, finished_at = ? WHERE id = ? AND lease_token = ? AND state = 'claimed' AND lease_expires_at > ? RETURNING queue, lease_agent";
