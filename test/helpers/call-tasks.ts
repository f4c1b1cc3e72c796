// Requests of the MCP tasks extension, as a task-capable client (Claude Code) sends them: the
// extension named in _meta clientCapabilities on every request, and the 2026-07-28 routing
// headers (MCP-Protocol-Version, Mcp-Method, and Mcp-Name: the tool, or the taskId on tasks/*,
// as Claude Code sends it). For the call-task tests.
import type { DaemonProcess } from "./daemon.ts";
import { until } from "./until.ts";

export const TASKS = "io.modelcontextprotocol/tasks";
export const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
};
/** A modern request's _meta that declares no extension. */
export const META_NO_TASKS = { ...META, "io.modelcontextprotocol/clientCapabilities": {} };

/** One JSON-RPC request with these headers; answers the parsed body. */
export type Rpc = (method: string, params: Record<string, unknown>, headers: Record<string, string>) => Promise<any>;

export const routing = (method: string, name: unknown): Record<string, string> => ({
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": method,
  "mcp-name": String(name),
});

/** tools/call declaring the extension: the raw result (a ToolResult, or a CreateTaskResult). */
export async function taskCall(rpc: Rpc, name: string, args: Record<string, unknown>): Promise<any> {
  const body = await rpc("tools/call", { name, arguments: args, _meta: META }, routing("tools/call", name));
  if (body.error) throw new Error(`tools/call ${name}: ${JSON.stringify(body.error)}`);
  return body.result;
}

export const getTask = (rpc: Rpc, taskId: unknown) => rpc("tasks/get", { taskId, _meta: META }, routing("tasks/get", taskId));
export const cancelTask = (rpc: Rpc, taskId: unknown) => rpc("tasks/cancel", { taskId, _meta: META }, routing("tasks/cancel", taskId));

/** The tool's JSON inside a tools/call result. */
export const toolJson = (result: any) => JSON.parse(result.content[0].text);

/** Polls tasks/get until the task leaves `working`; its last answer. */
export async function settled(rpc: Rpc, taskId: string, timeoutMs = 10_000): Promise<any> {
  return until(`task ${taskId} to finish`, async () => {
    const r = (await getTask(rpc, taskId)).result;
    return r && r.status !== "working" ? r : undefined;
  }, timeoutMs, 50);
}

export const rpcOf = (d: DaemonProcess): Rpc => (method, params, headers) => d.rpc(method, params, { headers });
