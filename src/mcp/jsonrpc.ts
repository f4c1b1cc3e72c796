// Our own thin JSON-RPC 2.0 dispatcher. It keeps v2's wire behaviour exactly: no Accept header
// or initialize required, one application/json body per request, parse errors as HTTP 200.
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import type { Kernel } from "../domain/kernel.ts";
import { statusSnapshot } from "../domain/snapshot.ts";
import { VERSION } from "../version.ts";
import { INSTRUCTIONS } from "./instructions.ts";
import { runTool } from "./run-tool.ts";
import { TOOL_LIST } from "./tools/index.ts";

/** The protocol versions we speak, newest first; initialize echoes the client's if listed. */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
export const NEWEST_PROTOCOL_VERSION: string = PROTOCOL_VERSIONS[0];
// Kept in step with the SDK: its newest version must be one we answer.
if (!(PROTOCOL_VERSIONS as readonly string[]).includes(LATEST_PROTOCOL_VERSION)) {
  throw new Error(`MCP SDK speaks ${LATEST_PROTOCOL_VERSION}, which airlock does not list`);
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

export type Id = string | number | null;

export type RpcReply =
  | { kind: "response"; body: Record<string, unknown> }
  | { kind: "accepted" }; // a notification: HTTP 202, empty body

const reply = (id: Id, result: unknown): RpcReply => ({ kind: "response", body: { jsonrpc: "2.0", id, result } });
const failure = (id: Id, code: number, message: string): RpcReply => ({ kind: "response", body: { jsonrpc: "2.0", id, error: { code, message } } });

export const parseErrorReply = (): RpcReply => failure(null, PARSE_ERROR, "parse error");

export interface DispatchContext {
  kernel: Kernel;
  signal?: AbortSignal | undefined;
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
  if (typeof m.method !== "string") return failure((id ?? null) as Id, INVALID_REQUEST, "invalid request: method must be a string");
  const method = m.method;
  if (!hasId && method.startsWith("notifications/")) return { kind: "accepted" };
  if (m.params !== undefined && (typeof m.params !== "object" || m.params === null)) {
    return failure((id ?? null) as Id, INVALID_PARAMS, "invalid params: params must be an object");
  }
  const params = (m.params ?? {}) as Record<string, unknown>;
  const rid = (id ?? null) as Id;

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
    case "airlock/status":
      // Not MCP: what `airlock status` and `airlock watch` show, with waiters and queue depth.
      return reply(rid, statusSnapshot(ctx.kernel));
    default:
      if (method.startsWith("notifications/")) return { kind: "accepted" };
      return failure(rid, METHOD_NOT_FOUND, `method not found: ${method}`);
  }
}
