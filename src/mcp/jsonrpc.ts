// Our own thin JSON-RPC 2.0 dispatcher. It keeps v2's wire behaviour exactly: no Accept header
// or initialize required, one application/json body per request, parse errors as HTTP 200.
import type { Dashboard } from "./dashboard.ts";
import type { Kernel } from "../domain/kernel.ts";
import { statusSnapshot } from "../domain/snapshot.ts";
import { pidNamespace } from "../machine/process.ts";
import { VERSION } from "../version.ts";
import { type CallTaskRunner, extensionsOf, TASKS_EXTENSION, taskMethod } from "./call-tasks.ts";
import { INSTRUCTIONS } from "./instructions.ts";
import { runTool } from "./run-tool.ts";
import { TOOL_LIST } from "./tools/index.ts";

/**
 * The protocol versions we speak, newest first; initialize echoes the client's if listed.
 * A test keeps this in step with the MCP SDK's own constants; the SDK is not imported here
 * because loading it (and zod) at start-up costs tens of milliseconds for one string.
 */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
export const NEWEST_PROTOCOL_VERSION: string = PROTOCOL_VERSIONS[0];

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

/** A numeric id kept as the client's source text, for JSON.stringify to write back as is. */
export type RawId = { readonly rawJSON: string };
export type Id = string | number | null | RawId;

// JSON.parse's source text access and JSON.rawJSON (TC39 "JSON.parse source text access"),
// which Bun implements; typed here because TypeScript's lib does not have them yet.
type SourceReviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const parseWithSource = JSON.parse as (text: string, reviver: SourceReviver) => unknown;
const rawJson = (JSON as unknown as { rawJSON(text: string): RawId }).rawJSON;

/**
 * The top-level numeric id as the client wrote it, when a double would change it on the way
 * back (12345678901234567890, 1.50, 1e3, -0): JSON-RPC wants the same id in the reply.
 * A second parse, only for numeric ids: about 2 µs on a usual call.
 */
function echoNumericId(bodyText: string, id: number): number | RawId {
  const byHolder = new Map<unknown, string>();
  let source: string | undefined;
  try {
    parseWithSource(bodyText, function (key, value, context) {
      if (key === "id" && typeof value === "number" && context?.source !== undefined) byHolder.set(this, context.source);
      if (key === "") source = byHolder.get(value); // the last call: value is the whole message
      return value;
    });
  } catch {
    return id;
  }
  return source === undefined || source === String(id) ? id : rawJson(source);
}

export type RpcReply =
  | { kind: "response"; body: Record<string, unknown> }
  | { kind: "accepted" }; // a notification: HTTP 202, empty body

const reply = (id: Id, result: unknown): RpcReply => ({ kind: "response", body: { jsonrpc: "2.0", id, result } });
const failure = (id: Id, code: number, message: string): RpcReply => ({ kind: "response", body: { jsonrpc: "2.0", id, error: { code, message } } });

export const parseErrorReply = (): RpcReply => failure(null, PARSE_ERROR, "parse error");

export interface DispatchContext {
  kernel: Kernel;
  signal?: AbortSignal | undefined;
  /** Issues the one-time codes of airlock/ui-code. */
  dashboard?: Pick<Dashboard, "newCode"> | undefined;
  /** The MCP tasks extension's calls (src/mcp/call-tasks.ts). */
  callTasks?: CallTaskRunner | undefined;
}

export async function dispatch(bodyText: string, ctx: DispatchContext): Promise<RpcReply> {
  let msg: unknown;
  try {
    msg = JSON.parse(bodyText);
  } catch {
    return parseErrorReply();
  }
  if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return parseErrorReply();
  const m = msg as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return parseErrorReply();
  const hasId = "id" in m;
  const id = m.id;
  if (hasId && id !== null && typeof id !== "string" && typeof id !== "number") {
    return failure(null, INVALID_REQUEST, "invalid request: id must be a string, a number or null");
  }
  const rid: Id = typeof id === "number" ? echoNumericId(bodyText, id) : ((id ?? null) as Id);
  if (typeof m.method !== "string") return failure(rid, INVALID_REQUEST, "invalid request: method must be a string");
  const method = m.method;
  if (!hasId && method.startsWith("notifications/")) return { kind: "accepted" };
  // MCP's params are always by name: an array (by position) is as wrong as a string.
  if (m.params !== undefined && (typeof m.params !== "object" || m.params === null || Array.isArray(m.params))) {
    return failure(rid, INVALID_PARAMS, "invalid params: params must be an object");
  }
  const params = (m.params ?? {}) as Record<string, unknown>;

  switch (method) {
    case "initialize": {
      const asked = params.protocolVersion;
      const protocolVersion =
        typeof asked === "string" && (PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : NEWEST_PROTOCOL_VERSION;
      return reply(rid, {
        protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "airlock", version: VERSION },
        instructions: INSTRUCTIONS,
      });
    }
    case "ping":
      return reply(rid, {});
    case "tools/list":
      return reply(rid, { tools: TOOL_LIST });
    case "tools/call":
      // calltasks: a request declaring the tasks extension may get a task handle (src/mcp/call-tasks.ts).
      if (ctx.callTasks && extensionsOf(params).has(TASKS_EXTENSION)) return reply(rid, await ctx.callTasks.call(params.name, params.arguments, ctx.signal));
      return reply(rid, await runTool(ctx.kernel, params.name, params.arguments, ctx.signal));
    case "tasks/get":
    case "tasks/cancel": {
      // calltasks: the tasks extension's methods; -32021 for a request that did not declare it.
      const out = await taskMethod(ctx.callTasks, extensionsOf(params), method, params);
      return "error" in out ? failure(rid, out.error.code, out.error.message) : reply(rid, out.result);
    }
    case "airlock/status":
      // Not MCP: what `airlock status` and `airlock watch` show, with waiters and queue depth.
      return reply(rid, await statusSnapshot(ctx.kernel));
    case "airlock/ui-code":
      // Not MCP: a one-time code `airlock ui` opens the dashboard with (it becomes a cookie).
      if (!ctx.dashboard) return failure(rid, METHOD_NOT_FOUND, "this daemon serves no dashboard");
      return reply(rid, ctx.dashboard.newCode());
    case "airlock/identity":
      // Not MCP: which daemon answers, and in which PID namespace its pids mean something.
      // `airlock run` compares the namespace with its own before it binds a slot to a pid.
      return reply(rid, { pid: process.pid, pid_namespace: pidNamespace(), version: VERSION });
    default:
      if (method.startsWith("notifications/")) return { kind: "accepted" };
      return failure(rid, METHOD_NOT_FOUND, `method not found: ${method}`);
  }
}
