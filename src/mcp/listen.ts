// subscriptions/listen (2026-07-28): one long POST answered as a Server-Sent Events stream, in
// place of the 2025 GET stream. The first event acknowledges the notification types we honour;
// every event carries the listen request's id as io.modelcontextprotocol/subscriptionId. We
// push two kinds, each only when asked for:
//   airlockChanges → notifications/airlock/changes: the change feed, one event per batch that
//     watch_changes would answer ({revision, changes, trimmed?}), so a listener never polls;
//   tasksStatus    → notifications/tasks/status: call-task status changes, from whatever
//     TaskStatusSource the daemon wires in (the tasks extension's runner).
// Our tool list never changes, so toolsListChanged and the like are accepted and never sent
// (the acknowledgement leaves them out). Closing the stream ends the subscription: the journal
// wait is detached and the status listener removed. When the daemon stops, each open stream is
// sent the listen request's result ({_meta: {subscriptionId}}, the spec's graceful end) and closed.
import type { Kernel } from "../domain/kernel.ts";
import { changeView } from "../domain/snapshot.ts";
import { MISSING_CLIENT_CAPABILITY, type ModernEnvelope, type ModernError, TASKS_EXTENSION_ID } from "./modern.ts";

export const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/** One call task's new status, as the tasks extension reports it. */
export interface TaskStatusEvent {
  taskId: string;
  status: string;
  [field: string]: unknown;
}

/** Where status changes come from; onStatus returns the function that unsubscribes. */
export interface TaskStatusSource {
  onStatus(listener: (e: TaskStatusEvent) => void): () => void;
}

export interface ListenContext {
  kernel: Kernel;
  signal?: AbortSignal | undefined;
  taskStatus?: TaskStatusSource | undefined;
  /** The open streams' shutdown functions: the app ends them all when the daemon stops. */
  listens?: Set<() => void> | undefined;
}

// A journal wait per round: the longest a blocked call may wait (watch_changes' own cap).
const WATCH_ROUND_MS = 50_000;
// An SSE comment this often keeps Bun's idle timeout (120 s) and proxies from cutting a quiet stream.
const KEEPALIVE_MS = 25_000;
// At most this many journal records per event, like one watch_changes answer.
const BATCH = 100;

interface ChangesFilter {
  since?: number;
  kinds?: string[];
  resourcePrefix?: string;
}

interface Filter {
  changes?: ChangesFilter;
  tasks?: true;
  /** What the acknowledgement reports as honoured. */
  honoured: Record<string, unknown>;
}

const invalid = (message: string): ModernError => ({ status: 400, code: -32602, message: `invalid params: ${message}` });

function parseFilter(raw: unknown, env: ModernEnvelope): Filter | ModernError {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return invalid("subscriptions/listen needs notifications (an object of the types you want)");
  const n = raw as Record<string, unknown>;
  const f: Filter = { honoured: {} };
  const c = n.airlockChanges;
  if (c === true || (typeof c === "object" && c !== null && !Array.isArray(c))) {
    const o = (c === true ? {} : c) as Record<string, unknown>;
    const cf: ChangesFilter = {};
    if (o.since_revision !== undefined) {
      if (!Number.isSafeInteger(o.since_revision) || (o.since_revision as number) < 0) return invalid("airlockChanges.since_revision must be a whole number >= 0");
      cf.since = o.since_revision as number;
    }
    if (o.kinds !== undefined) {
      if (!Array.isArray(o.kinds) || !o.kinds.every((k) => typeof k === "string")) return invalid("airlockChanges.kinds must be an array of strings");
      cf.kinds = o.kinds as string[];
    }
    if (o.resource_prefix !== undefined) {
      if (typeof o.resource_prefix !== "string") return invalid("airlockChanges.resource_prefix must be a string");
      cf.resourcePrefix = o.resource_prefix;
    }
    f.changes = cf;
    f.honoured.airlockChanges = c;
  } else if (c !== undefined && c !== false) return invalid("airlockChanges must be true or an object {since_revision?, kinds?, resource_prefix?}");
  if (n.tasksStatus === true) {
    if (!env.extensions.has(TASKS_EXTENSION_ID)) {
      return {
        status: 400,
        code: MISSING_CLIENT_CAPABILITY,
        message: `missing client capability: tasksStatus needs the ${TASKS_EXTENSION_ID} extension in clientCapabilities.extensions`,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } },
      };
    }
    f.tasks = true;
    f.honoured.tasksStatus = true;
  }
  return f;
}

const encoder = new TextEncoder();

/** Opens the stream, or answers why not (the caller sends that as an HTTP error). */
export function openListen(id: unknown, params: Record<string, unknown>, env: ModernEnvelope, ctx: ListenContext): ReadableStream<Uint8Array> | ModernError {
  const filter = parseFilter(params.notifications, env);
  if ("code" in filter) return filter;
  const meta = { [SUBSCRIPTION_ID]: id };
  const done = new AbortController();
  const cleanups: (() => void)[] = [];
  const end = () => {
    if (done.signal.aborted) return;
    done.abort();
    for (const c of cleanups.splice(0)) c();
  };
  // The server ends the subscription (the daemon stops): the listen request's result, then EOF.
  let finish = () => {};
  const shutdown = () => {
    finish();
    end();
  };
  if (ctx.listens) {
    const listens = ctx.listens;
    listens.add(shutdown);
    cleanups.push(() => listens.delete(shutdown));
  }
  if (ctx.signal) {
    if (ctx.signal.aborted) done.abort();
    const onAbort = () => end();
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    cleanups.push(() => ctx.signal?.removeEventListener("abort", onAbort));
  }

  return new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (chunk: string) => {
        if (done.signal.aborted) return;
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          end();
        }
      };
      const notify = (method: string, p: Record<string, unknown>) => write(`data: ${JSON.stringify({ jsonrpc: "2.0", method, params: { ...p, _meta: meta } })}\n\n`);
      cleanups.push(() => {
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      });
      finish = () => write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result: { _meta: meta } })}\n\n`);
      notify("notifications/subscriptions/acknowledged", { notifications: filter.honoured });
      const keepalive = setInterval(() => write(": keepalive\n\n"), KEEPALIVE_MS);
      cleanups.push(() => clearInterval(keepalive));
      if (filter.tasks && ctx.taskStatus) {
        cleanups.push(ctx.taskStatus.onStatus((e) => notify("notifications/tasks/status", { ...e })));
      }
      if (filter.changes) void pushChanges(ctx.kernel, filter.changes, done.signal, notify).catch(() => end());
    },
    cancel() {
      end();
    },
  });
}

/** The change feed, from the revision at open (or since_revision) onward, until the stream ends. */
async function pushChanges(kernel: Kernel, f: ChangesFilter, signal: AbortSignal, notify: (method: string, p: Record<string, unknown>) => void): Promise<void> {
  let since = f.since ?? (await kernel.journal.revision());
  const filter = { kinds: f.kinds, resourcePrefix: f.resourcePrefix };
  while (!signal.aborted) {
    const r = await kernel.journal.watch(since, WATCH_ROUND_MS, filter, BATCH, signal);
    if (signal.aborted) return;
    if (r.changes.length > 0) notify("notifications/airlock/changes", { revision: r.revision, changes: r.changes.map(changeView), ...(r.trimmed ? { trimmed: true } : {}) });
    since = r.revision;
  }
}
