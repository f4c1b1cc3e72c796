// Our own thin JSON-RPC 2.0 dispatcher. It keeps v2's wire behaviour exactly: no Accept header
// or initialize required, one application/json body per request, parse errors as HTTP 200.
import type { Dashboard } from "./dashboard.ts";
import type { Kernel } from "../domain/kernel.ts";
import { statusSnapshot } from "../domain/snapshot.ts";
import { memoryAfterCollection } from "../machine/memory.ts";
import { pidNamespace } from "../machine/process.ts";
import { VERSION } from "../version.ts";
import { type CallTaskRunner, taskMethod } from "./call-tasks.ts";
import type { EraTally } from "./eras.ts";
import { INSTRUCTIONS } from "./instructions.ts";
import { type ListenContext, openListen } from "./listen.ts";
import { checkEnvelope, DISCOVER_RESULT, type Era, isModern, MISSING_CLIENT_CAPABILITY, MODERN_VERSION, modernErrorBody, modernResult, TASKS_EXTENSION_ID, TOOLS_LIST_RESULT } from "./modern.ts";
import { deliverMethod } from "./deliver.ts";
import { runTool } from "./run-tool.ts";
import { TOOL_LIST, TOOLS_BY_NAME } from "./tools/index.ts";
import { NEWEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS } from "./versions.ts";

export { NEWEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS };

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
  // The usual body names "id" once, with no escapes: that is the top-level key, and its source
  // text follows the colon. Only other bodies pay for the second parse (which grows with the
  // body: a 2026-07-28 request's _meta made it the largest part of that era's extra cost).
  const at = bodyText.indexOf('"id"');
  if (at >= 0 && bodyText.indexOf('"id"', at + 4) < 0 && !bodyText.includes("\\")) {
    NUMBER_AFTER_COLON.lastIndex = at + 4;
    const m = NUMBER_AFTER_COLON.exec(bodyText);
    if (m) return m[1] === String(id) ? id : rawJson(m[1]!);
  }
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

// Sticky: matches right after the "id" key. JSON's own number grammar, whole.
const NUMBER_AFTER_COLON = /\s*:\s*(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

export type RpcReply =
  | { kind: "response"; body: Record<string, unknown>; /** HTTP status; 200 when absent. */ status?: number }
  | { kind: "accepted" } // a notification: HTTP 202, empty body
  | { kind: "stream"; body: ReadableStream<Uint8Array> }; // subscriptions/listen: text/event-stream

const reply = (id: Id, result: unknown): RpcReply => ({ kind: "response", body: { jsonrpc: "2.0", id, result } });
const failure = (id: Id, code: number, message: string): RpcReply => ({ kind: "response", body: { jsonrpc: "2.0", id, error: { code, message } } });

export const parseErrorReply = (): RpcReply => failure(null, PARSE_ERROR, "parse error");


export interface DispatchContext extends ListenContext {
  /** Issues the one-time codes of airlock/ui-code. */
  dashboard?: Pick<Dashboard, "newCode"> | undefined;
  /** The request's headers: the 2026-07-28 era checks its routing headers against the body. */
  headers?: Headers | undefined;
  eras?: EraTally | undefined;
  /** Set by the dispatcher once the request's era is known (IFACE rule 1). */
  era?: Era;
  /** A modern request's clientCapabilities.extensions keys (empty in the 2025 era). */
  extensions?: ReadonlySet<string>;
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
  if (isModern(method, params)) return dispatchModern(rid, method, params, ctx);
  ctx.era = "2025";
  ctx.eras?.count("2025", ctx.headers);

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
      return reply(rid, await runTool(ctx.kernel, params.name, params.arguments, ctx.signal));
    default: {
      const own = await airlockMethod(method, params, ctx);
      if (own === NO_DASHBOARD) return failure(rid, METHOD_NOT_FOUND, "this daemon serves no dashboard");
      if (own instanceof InvalidParams) return failure(rid, INVALID_PARAMS, `invalid params: ${own.message}`);
      if (own !== undefined) return reply(rid, own);
      if (method.startsWith("notifications/")) return { kind: "accepted" };
      return failure(rid, METHOD_NOT_FOUND, `method not found: ${method}`);
    }
  }
}

const NO_DASHBOARD = Symbol("no dashboard");

/** One of our methods refused its params. */
class InvalidParams {
  constructor(readonly message: string) {}
}

/**
 * Our own methods (not MCP), served in both eras: in a modern request they pass the same
 * envelope checks and get a resultType like any result. Undefined: not one of ours.
 */
async function airlockMethod(method: string, params: Record<string, unknown>, ctx: DispatchContext): Promise<unknown> {
  switch (method) {
    case "airlock/status":
      // What `airlock status` and `airlock watch` show, with waiters and queue depth, and how
      // many requests each protocol era has served.
      return ctx.eras ? { ...(await statusSnapshot(ctx.kernel)), ...ctx.eras.view() } : await statusSnapshot(ctx.kernel);
    case "airlock/ui-code":
      // A one-time code `airlock ui` opens the dashboard with (it becomes a cookie).
      return ctx.dashboard ? ctx.dashboard.newCode() : NO_DASHBOARD;
    case "airlock/identity":
      // Which daemon answers, and in which PID namespace its pids mean something.
      // `airlock run` compares the namespace with its own before it binds a slot to a pid.
      return { pid: process.pid, pid_namespace: pidNamespace(), version: VERSION };
    case "airlock/deliver": {
      // The hooks' delivery of unread messages into the model, once each (src/mcp/deliver.ts).
      const out = await deliverMethod(ctx.kernel, params);
      return "error" in out ? new InvalidParams(out.error) : out.result;
    }
    case "airlock/memory":
      // The daemon's memory after a full collection, for leak checks (test/reliability/soak).
      return memoryAfterCollection();
    default:
      return undefined;
  }
}

const modernReply = (id: Id, result: unknown): RpcReply => ({ kind: "response", body: { jsonrpc: "2.0", id, result: modernResult(result) } });
const modernFailure = (id: Id, status: number, code: number, message: string, data?: Record<string, unknown>): RpcReply => ({
  kind: "response",
  status,
  body: modernErrorBody(id, data ? { status, code, message, data } : { status, code, message }),
});

/**
 * The 2026-07-28 era: no initialize, no ping, no sessions; the envelope and the headers are
 * checked first (modern.ts), then the method. Protocol errors are HTTP 400 (404 for an unknown
 * method), with the request's id.
 */
async function dispatchModern(rid: Id, method: string, params: Record<string, unknown>, ctx: DispatchContext): Promise<RpcReply> {
  const env = checkEnvelope(method, params, ctx.headers);
  if ("code" in env) return { kind: "response", status: env.status, body: modernErrorBody(rid, env) };
  ctx.era = MODERN_VERSION;
  ctx.extensions = env.extensions;
  ctx.eras?.count(MODERN_VERSION, ctx.headers);
  switch (method) {
    case "server/discover":
      return { kind: "response", body: { jsonrpc: "2.0", id: rid, result: DISCOVER_RESULT } };
    case "tools/list":
      return { kind: "response", body: { jsonrpc: "2.0", id: rid, result: TOOLS_LIST_RESULT } };
    case "tools/call":
      // An unknown tool is a protocol error here, as the MCP spec has it (the 2025 era keeps
      // v2's tool-level error result).
      if (typeof params.name !== "string" || !TOOLS_BY_NAME.has(params.name)) {
        return modernFailure(rid, 200, INVALID_PARAMS, `unknown tool: ${String(params.name ?? "")}`);
      }
      // A client that declares the tasks extension may get a task handle for a long wait
      // (src/mcp/call-tasks.ts): a CreateTaskResult, whose resultType "task" modernReply keeps.
      if (ctx.callTasks && env.extensions.has(TASKS_EXTENSION_ID)) return modernReply(rid, await ctx.callTasks.call(params.name, params.arguments, ctx.signal));
      return modernReply(rid, await runTool(ctx.kernel, params.name, params.arguments, ctx.signal));
    case "tasks/get":
    case "tasks/cancel": {
      // The tasks extension's methods; -32021 (HTTP 400) for a request that did not declare it.
      const out = await taskMethod(ctx.callTasks, env.extensions, method, params);
      if ("result" in out) return modernReply(rid, out.result);
      return modernFailure(rid, out.error.code === MISSING_CLIENT_CAPABILITY ? 400 : 200, out.error.code, out.error.message, out.error.data);
    }
    case "subscriptions/listen": {
      const stream = openListen(rid, params, env, ctx);
      if (stream instanceof ReadableStream) return { kind: "stream", body: stream };
      return modernFailure(rid, stream.status, stream.code, stream.message, stream.data);
    }
    default: {
      const own = await airlockMethod(method, params, ctx);
      if (own === NO_DASHBOARD) return modernFailure(rid, 404, METHOD_NOT_FOUND, "this daemon serves no dashboard");
      if (own instanceof InvalidParams) return modernFailure(rid, 200, INVALID_PARAMS, `invalid params: ${own.message}`);
      if (own !== undefined) return modernReply(rid, own);
      // initialize, ping, logging/setLevel, resources/subscribe... do not exist in this era.
      return modernFailure(rid, 404, METHOD_NOT_FOUND, `method not found: ${method}`);
    }
  }
}
