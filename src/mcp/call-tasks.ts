// The MCP tasks extension (io.modelcontextprotocol/tasks) for the blocking tools: a call that
// cannot be answered at once and asks to wait longer than a client keeps a tool call open
// (more than 50 s, up to an hour) is answered at once with a task handle, and its wait goes on
// here. The task *is* the tool call, run with its own AbortController instead of the HTTP
// request's signal: its waiter stands in line, keeps its place and joins the deadlock graph
// exactly as a blocked call's does (domain/wait.ts), and the kernel's block hook (ctx.watchBlocks)
// says, by that signal, whether the call blocked (answer the handle) or answered (answer that).
// Its row (domain/call-tasks.ts) is written before the handle goes out; at start the daemon
// resumes its working tasks with their wake_token, so each keeps its place across a restart.
// docs/tasks.md has the lifecycle.
import * as v from "valibot";
import type { CallTaskRow, CallTaskStatusEvent } from "../domain/call-tasks.ts";
import type { Kernel } from "../domain/kernel.ts";
import { LOCAL_DAEMON } from "../domain/lines.ts";
import { errorMessage } from "../errors.ts";
import { createLog } from "../log.ts";
import { MISSING_CLIENT_CAPABILITY, TASKS_EXTENSION_ID } from "./modern.ts";
import { MAX_WAIT_SECONDS } from "./tools/args.ts";
import { TOOLS_BY_NAME } from "./tools/index.ts";
import { runTool, type ToolResult } from "./run-tool.ts";

const log = createLog("call-tasks");


/** The longest wait a call task may ask: an hour covers a queue for a build slot; longer is a mistake. */
export const MAX_TASK_WAIT_SECONDS = 3600;
/**
 * How long a finished task keeps its result (and a cancelled one its status): five minutes lets a
 * client that polls every few seconds miss many polls or reconnect, and bounds how long a lock
 * granted to a client that left sits unused before it is handed back.
 */
export const CALL_TASK_TTL_MS = 5 * 60 * 1000;
/** How often a client should poll tasks/get: a grant reaches the agent within 2 s; a poll costs well under 1 ms. */
export const CALL_TASK_POLL_MS = 2000;

const INVALID_PARAMS = -32602;
const MAX_TASK_ID_LENGTH = 64;
/**
 * A shared store: how often a daemon looks for working tasks whose daemon's heartbeat lapsed (it
 * died), to take them over. A daemon counts as dead after 5 s (DEAD_AFTER_MS); one look in that
 * time is one small query.
 */
export const TAKE_OVER_EVERY_MS = 5000;

export type CreateTaskResult = {
  resultType: "task";
  taskId: string;
  status: "working";
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
};

/** A tasks/* method's answer: its result, or a JSON-RPC error. */
export type TaskMethodOutcome = { result: Record<string, unknown> } | { error: { code: number; message: string; data?: Record<string, unknown> } };

/** The wait a call asks for, when it is one a call task serves (> 50 s); else undefined. */
function askedWait(name: unknown, rawArgs: unknown): number | undefined {
  if (typeof name !== "string" || TOOLS_BY_NAME.get(name)?.blocking !== true) return undefined;
  if (typeof rawArgs !== "object" || rawArgs === null || Array.isArray(rawArgs)) return undefined;
  const w = (rawArgs as Record<string, unknown>).wait_seconds;
  if (typeof w !== "number" || !Number.isFinite(w) || Math.trunc(w) <= MAX_WAIT_SECONDS) return undefined;
  return Math.min(MAX_TASK_WAIT_SECONDS, Math.trunc(w));
}

const iso = (ms: number) => new Date(ms).toISOString();
const invalid = (message: string): TaskMethodOutcome => ({ error: { code: INVALID_PARAMS, message } });

/** A task as tasks/get answers it (and the listen stream's notifications/tasks/status carries it). */
export function taskView(row: CallTaskRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    taskId: row.task_id,
    status: row.status,
    createdAt: iso(row.created_at),
    lastUpdatedAt: iso(row.updated_at),
    ttlMs: row.ttl_ms,
    pollIntervalMs: row.poll_ms,
  };
  if (row.status === "completed" && row.result !== null) out.result = JSON.parse(row.result) as unknown;
  return out;
}

/** Where a task's call stands in line, as its block hook saw it. */
interface Watch {
  place: { queue: string; token: string } | undefined;
  taskId: string | undefined;
  blocked: Promise<void>;
  stop: () => void;
}

export interface CallTaskOptions {
  ttlMs?: number;
  pollMs?: number;
}

/** One kernel's call tasks: the daemon makes one, starts it before it serves, and closes it first. */
export class CallTaskRunner {
  /** The calls this daemon runs for working tasks, by taskId. */
  private readonly live = new Map<string, AbortController>();
  private readonly daemon: string;
  private readonly ttlMs: number;
  private readonly pollMs: number;
  private closed = false;
  private takeOverTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly kernel: Kernel,
    o: CallTaskOptions = {},
  ) {
    this.daemon = kernel.store.shared?.daemonId ?? LOCAL_DAEMON;
    this.ttlMs = o.ttlMs ?? CALL_TASK_TTL_MS;
    this.pollMs = o.pollMs ?? CALL_TASK_POLL_MS;
    kernel.callTasks.onExpired = (row) => void this.handBack(row);
  }

  /** Status changes made here, for the listen stream: {taskId, status, task} (task: tasks/get's view). */
  onStatus(fn: (e: { taskId: string; status: CallTaskStatusEvent["status"]; task?: Record<string, unknown> }) => void): () => void {
    return this.kernel.callTasks.onStatus((e) => fn({ taskId: e.taskId, status: e.status, ...(e.row ? { task: taskView(e.row) } : {}) }));
  }

  /** At start: finished tasks' drops armed, and each working task's call resumed with its remaining wait. */
  async start(): Promise<void> {
    const k = this.kernel;
    await k.ctx.tx(() => k.callTasks.armAll());
    const working = await k.ctx.read(() => k.callTasks.working(this.daemon));
    for (const row of working) this.resume(row);
    if (k.store.shared) {
      await this.takeOver();
      this.takeOverTimer = setInterval(() => void this.takeOver().catch((err) => log.warn(`taking over call tasks failed: ${errorMessage(err)}`)), TAKE_OVER_EVERY_MS);
      this.takeOverTimer.unref?.();
    }
  }

  /** A shared store: the working tasks of daemons that stopped or died are resumed here (each by one daemon). */
  private async takeOver(): Promise<void> {
    const k = this.kernel;
    const live = await k.liveDaemons();
    if (!live || this.closed) return;
    // Every few seconds on every daemon: rows no daemon mirrors, read in the shared order (an
    // exclusive read here stopped every daemon's row bodies each time); only a take-over writes.
    for (const row of await k.ctx.rowRead("call_tasks", "", () => k.callTasks.orphans(this.daemon, live))) {
      if (this.closed) return;
      if (await k.ctx.tx(() => k.callTasks.adopt(row.task_id, row.daemon, this.daemon))) this.resume(row);
    }
  }

  /** Shutdown: answers from here on are not written (the calls are ended by the kernel's close, and resumed at the next start). */
  close(): void {
    this.closed = true;
    clearInterval(this.takeOverTimer);
  }

  /**
   * tools/call from a request that declares the extension: a blocking call asking for more than
   * 50 s that blocks becomes a task; every other call runs as an ordinary one.
   */
  async call(name: unknown, rawArgs: unknown, signal?: AbortSignal): Promise<ToolResult | CreateTaskResult> {
    const wait = askedWait(name, rawArgs);
    if (wait === undefined || this.closed) return runTool(this.kernel, name, rawArgs, signal);
    const k = this.kernel;
    const ac = new AbortController();
    const watch = this.watch(ac.signal);
    const deadline = k.clock.now() + wait * 1000;
    const answer = runTool(k, name, rawArgs, ac.signal, wait);
    const first = await Promise.race([answer, watch.blocked.then(() => undefined)]);
    const at = watch.place;
    if (first !== undefined || at === undefined) {
      watch.stop();
      return first ?? answer;
    }
    const taskId = crypto.randomUUID();
    this.live.set(taskId, ac);
    const row = await k.ctx.tx(() => {
      const now = watch.place ?? at; // where it stands when the row is written
      watch.taskId = taskId; // from here on, a new place is written to the row
      return k.callTasks.create({ taskId, tool: name as string, args: rawArgs, queue: now.queue, wakeToken: now.token, daemon: this.daemon, deadline, ttlMs: this.ttlMs, pollMs: this.pollMs });
    });
    const durable = k.store.durable();
    if (durable) await durable;
    this.follow(taskId, answer, watch);
    return {
      resultType: "task",
      taskId,
      status: "working",
      createdAt: iso(row.created_at),
      lastUpdatedAt: iso(row.updated_at),
      ttlMs: row.ttl_ms,
      pollIntervalMs: row.poll_ms,
    };
  }

  /** tasks/get: the task's status; once completed, the tools/call result its call answered. */
  async get(params: Record<string, unknown>): Promise<TaskMethodOutcome> {
    const id = taskIdOf(params);
    if (typeof id !== "string") return id;
    const k = this.kernel;
    const row = await k.ctx.rowRead("call_tasks", id, () => k.callTasks.get(id));
    if (!row) return invalid(`unknown taskId: ${id}`);
    if (row.status === "completed" && !row.fetched) await k.ctx.tx(() => k.callTasks.markFetched(id));
    return { result: { resultType: "complete", ...taskView(row) } };
  }

  /** tasks/cancel: withdraws a working task's wait (its place in line goes); a finished one is left as it is. */
  async cancel(params: Record<string, unknown>): Promise<TaskMethodOutcome> {
    const id = taskIdOf(params);
    if (typeof id !== "string") return id;
    const k = this.kernel;
    const row = await k.ctx.tx(() => k.callTasks.cancel(id));
    if (!row) return invalid(`unknown taskId: ${id}`);
    this.live.get(id)?.abort();
    return { result: { resultType: "complete" } };
  }

  /** A working task left by the last run: its call again, with its wake_token and what is left of its wait. */
  private resume(row: CallTaskRow): void {
    const k = this.kernel;
    const tool = TOOLS_BY_NAME.get(row.tool);
    const args = JSON.parse(row.args) as Record<string, unknown>;
    if (tool && row.wake_token && "wake_token" in tool.args.entries) args.wake_token = row.wake_token;
    const wait = Math.min(MAX_TASK_WAIT_SECONDS, Math.max(0, Math.ceil((row.deadline - k.clock.now()) / 1000)));
    const ac = new AbortController();
    this.live.set(row.task_id, ac);
    const watch = this.watch(ac.signal, row.task_id);
    if (row.queue && row.wake_token) watch.place = { queue: row.queue, token: row.wake_token };
    this.follow(row.task_id, runTool(k, row.tool, args, ac.signal, wait), watch);
    log.info(`resumed call task ${row.task_id} (${row.tool}, ${wait} s left)`);
  }

  /**
   * Watches a task's call block, from before it starts: `blocked` resolves at its first block, and
   * `place` is where it stands. Once the task exists (`taskId`), a new place (a resumed call whose
   * old one had lapsed, say) is written to its row, so cancelling and resuming find it.
   */
  private watch(signal: AbortSignal, taskId?: string): Watch {
    const k = this.kernel;
    let blocked!: () => void;
    const w: Watch = { place: undefined, taskId, blocked: new Promise<void>((r) => (blocked = r)), stop: () => {} };
    w.stop = k.ctx.watchBlocks(signal, (q, waiter) => {
      const same = w.place?.queue === q.name && w.place.token === waiter.token;
      const at = (w.place = { queue: q.name, token: waiter.token });
      blocked();
      const id = w.taskId;
      if (same || id === undefined) return;
      void Promise.resolve(k.ctx.tx(() => k.callTasks.place(id, at.queue, at.token))).catch((err) => log.error(`call task ${id}: ${errorMessage(err)}`));
    });
    return w;
  }

  /** Writes the call's answer down as the task's result when it comes (unless the task was cancelled meanwhile). */
  private follow(taskId: string, answer: Promise<ToolResult>, watch: Watch): void {
    const k = this.kernel;
    watch.taskId = taskId;
    void answer
      .then(async (result) => {
        watch.stop();
        this.live.delete(taskId);
        if (this.closed) return; // the kernel's close ended the call: the next start resumes it
        await k.ctx.tx(() => k.callTasks.complete(taskId, result));
      })
      .catch((err) => log.error(`call task ${taskId} could not be completed: ${errorMessage(err)}`));
  }

  /** An expired task's result was never fetched: what it was granted goes back, by its tool's rule. */
  private async handBack(row: CallTaskRow): Promise<void> {
    const tool = TOOLS_BY_NAME.get(row.tool);
    if (!tool?.handBack || row.result === null) return;
    try {
      const result = JSON.parse(row.result) as ToolResult;
      if (result.isError) return;
      const answer = JSON.parse(result.content[0]!.text) as unknown;
      const args = v.safeParse(tool.args, JSON.parse(row.args));
      if (!args.success || typeof answer !== "object" || answer === null || Array.isArray(answer)) return;
      await tool.handBack(answer as Record<string, unknown>, args.output, { kernel: this.kernel });
      log.info(`call task ${row.task_id} expired unfetched: its ${row.tool} grant was handed back`);
    } catch (err) {
      log.error(`call task ${row.task_id}: hand-back failed: ${errorMessage(err)}`);
    }
  }
}

/** The taskId of tasks/get or tasks/cancel, or the -32602 that its absence or shape is. */
function taskIdOf(params: Record<string, unknown>): string | TaskMethodOutcome {
  const id = params.taskId;
  if (typeof id !== "string" || id.length === 0) return invalid("invalid params: taskId must be a non-empty string");
  if (id.length > MAX_TASK_ID_LENGTH) return invalid(`invalid params: taskId must be at most ${MAX_TASK_ID_LENGTH} characters`);
  return id;
}

/**
 * tasks/get and tasks/cancel as the dispatcher calls them: refused with -32021 when the request
 * did not declare the extension (SEP-2575), else the runner's answer.
 */
export function taskMethod(runner: CallTaskRunner | undefined, extensions: ReadonlySet<string>, method: "tasks/get" | "tasks/cancel", params: Record<string, unknown>): Promise<TaskMethodOutcome> | TaskMethodOutcome {
  if (!runner || !extensions.has(TASKS_EXTENSION_ID)) {
    // SEP-2575's MissingRequiredClientCapability, with the capability as a ClientCapabilities object.
    const message = `missing required client capability: declare the ${TASKS_EXTENSION_ID} extension to use ${method}`;
    return { error: { code: MISSING_CLIENT_CAPABILITY, message, data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } } } };
  }
  return method === "tasks/get" ? runner.get(params) : runner.cancel(params);
}
