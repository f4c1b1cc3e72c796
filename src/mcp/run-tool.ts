// Runs one tools/call: validates the arguments against the tool's schema, calls it, and shapes
// the answer as MCP content. Every failure becomes a tool-level error result
// ({"error": "..."} with isError), never a crash and never a half-done change: validation
// happens before the domain is touched, and the domain changes state only in transactions.
import * as v from "valibot";
import type { Kernel } from "../domain/kernel.ts";
import { AirlockError, errorMessage } from "../errors.ts";
import { createLog } from "../log.ts";
import { mark, TRACING } from "../trace.ts";
import { describeIssues } from "./tools/args.ts";
import { TOOLS_BY_NAME } from "./tools/index.ts";

const log = createLog("tools");

export interface ToolResult {
  content: { type: "text"; text: string }[];
  isError?: true;
}

export function textResult(value: unknown, isError = false): ToolResult {
  const r: ToolResult = { content: [{ type: "text", text: JSON.stringify(value) }] };
  if (isError) r.isError = true;
  return r;
}

export const errorResult = (message: string): ToolResult => textResult({ error: message }, true);

/**
 * A lone surrogate becomes U+FFFD, as v2's Go decoder did. SQLite stores UTF-8 (where it turns
 * into U+FFFD anyway), so without this "x\ud800" and "x\ufffd" would be one lock in the store
 * but two lines of waiters in memory. Only strings and arrays of strings reach the schemas.
 */
function wellFormed(val: unknown): unknown {
  if (typeof val === "string") return val.toWellFormed();
  if (Array.isArray(val)) return val.map((x) => (typeof x === "string" ? x.toWellFormed() : x));
  return val;
}

/**
 * Where a value holds a string with the NUL character (U+0000), as a field path (`paths[2]`);
 * null when none does. PostgreSQL's text cannot hold it (SQLite's can, as v2's did).
 */
function nulAt(val: unknown, path: string): string | null {
  if (typeof val === "string") return val.includes("\u0000") ? path : null;
  if (Array.isArray(val)) {
    for (let i = 0; i < val.length; i++) {
      const at = nulAt(val[i], `${path}[${i}]`);
      if (at) return at;
    }
  } else if (val !== null && typeof val === "object") {
    for (const [k, x] of Object.entries(val)) {
      const at = nulAt(x, `${path}.${k}`);
      if (at) return at;
    }
  }
  return null;
}

/**
 * `waitSeconds`: a call task's wait (src/mcp/call-tasks.ts), which may pass the 50 s every schema
 * clamps wait_seconds to; it replaces the clamped value after validation. Ordinary calls never pass it.
 */
export async function runTool(kernel: Kernel, name: unknown, rawArgs: unknown, signal?: AbortSignal, waitSeconds?: number): Promise<ToolResult> {
  if (typeof name !== "string") return errorResult(`unknown tool: ${name === undefined ? "" : String(name)}`);
  const tool = TOOLS_BY_NAME.get(name);
  if (!tool) return errorResult(`unknown tool: ${name}`);
  if (rawArgs !== undefined && rawArgs !== null && (typeof rawArgs !== "object" || Array.isArray(rawArgs))) {
    return errorResult("arguments must be a JSON object");
  }
  // A null argument means "not given", as it did for v2's Go decoder. The copy has no
  // prototype, so a "__proto__" key stays an ordinary (ignored) argument instead of lending
  // the schema inherited values.
  const args: Record<string, unknown> = Object.create(null);
  for (const [k, val] of Object.entries((rawArgs ?? {}) as Record<string, unknown>)) if (val !== null) args[k] = wellFormed(val);

  const parsed = v.safeParse(tool.args, args);
  if (!parsed.success) return errorResult(describeIssues(parsed.issues));
  if (kernel.store.kind === "postgres") {
    // Refused before anything runs: the store would fail the statement (and with it every call
    // its transaction carries), where SQLite stores it as v2 did (docs/decisions.md). Only the
    // arguments the tool takes: others are ignored anyway.
    for (const [name, value] of Object.entries(parsed.output)) {
      const at = nulAt(value, name);
      if (at) return errorResult(`${at}: must not contain the NUL character (U+0000): a PostgreSQL store cannot hold it`);
    }
  }
  if (waitSeconds !== undefined && "wait_seconds" in parsed.output) (parsed.output as { wait_seconds: number }).wait_seconds = waitSeconds;
  try {
    const handedOff = kernel.ctx.sequences.handOffs;
    const pending = tool.run(parsed.output, { kernel, signal });
    // The call's own transaction ran synchronously above: did it hand something to a waiter?
    const gaveAway = kernel.ctx.sequences.handOffs !== handedOff;
    const result = await pending;
    if (TRACING) mark(`ran ${name}`);
    // In "full" durability an answer leaves only once what the call did is on disk.
    const durable = kernel.store.durable();
    if (durable) await durable; // null: already durable, and no turn is spent on it
    if (TRACING) mark(`durable ${name}`);
    // A waiter handed a resource by this call has waited longest: its answer goes out first,
    // and this one a turn of the event loop later (otherwise this shorter chain wins the race
    // to the socket and the waiter's client reads it second).
    if (gaveAway) await new Promise((r) => setImmediate(r));
    if (TRACING && gaveAway) mark(`ordered ${name}`);
    return textResult(result);
  } catch (err) {
    if (err instanceof AirlockError) return errorResult(err.message);
    log.error(`${name} failed:`, err);
    return errorResult(`internal error in ${name}: ${errorMessage(err)}`);
  }
}
