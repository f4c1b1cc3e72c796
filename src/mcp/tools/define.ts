// The shape of one tool: wire name, agent-facing description, valibot argument schema and a
// handler that maps wire arguments onto the domain and the domain's answer onto v2's result.
import type * as v from "valibot";
import { secondsUntil } from "../../domain/context.ts";
import type { Kernel } from "../../domain/kernel.ts";

export interface ToolContext {
  kernel: Kernel;
  /** Aborts when the caller's HTTP connection goes away. */
  signal?: AbortSignal | undefined;
}

export type ArgsSchema = v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>;

export interface Tool<S extends ArgsSchema = ArgsSchema> {
  name: string;
  title: string;
  description: string;
  args: S;
  /** Whether the call may block (MCP annotations tell clients it is not instant). */
  blocking?: boolean;
  /** True when the tool changes nothing (MCP readOnlyHint). */
  readOnly?: boolean;
  run(args: v.InferOutput<S>, ctx: ToolContext): unknown;
  /**
   * A blocking tool's grant given back: what `result` (its answer, as JSON) was granted is
   * released, as for a client that left. A call task whose result nobody fetched within its ttl
   * runs it (src/mcp/call-tasks.ts). A blocking tool without it grants nothing that must go back.
   */
  handBack?(result: Record<string, unknown>, args: v.InferOutput<S>, ctx: ToolContext): Promise<unknown>;
}

export function defineTool<S extends ArgsSchema>(tool: Tool<S>): Tool {
  return tool as unknown as Tool;
}

/** Seconds remaining, rounded up, for v2's expires_in_seconds fields. */
/** The sentence every blocking tool that can close a wait-for cycle adds to its description. */
export const DEADLOCK_NOTE =
  " If waiting would close a deadlock (you hold what the agents you wait for are waiting for, across locks, slots and " +
  "path claims), you get deadlock:{cycle:[{agent_id, waits_for, resource}]} at once instead, and no place in line: " +
  "release what you hold, then retry.";

/**
 * The sentence every blocking tool adds: how long a call may wait. A client that declares the MCP
 * tasks extension gets a background task for a long wait instead of a call it would cut near 60 s.
 */
export const TASK_WAIT_NOTE =
  " Long waits: wait_seconds is capped at 50 per call, unless your client declares the MCP tasks extension: then " +
  "up to 3600 (e.g. wait_seconds: 1800), and a call that has to wait returns at once as a background task; keep " +
  "working, you are told when it completes, with the answer a blocked call would have given.";

export function inSeconds(kernel: Kernel, at: number): number {
  return secondsUntil(at, kernel.clock.now());
}

/** Copies only the keys whose value is present: optional keys are omitted, never null. */
export function compact<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(o)) if (val !== undefined && val !== null) out[k] = val;
  return out as T;
}
