// `airlock/deliver`, our JSON-RPC method for the hooks (src/clients/hooks/inbox.ts): what a
// session's model has not been shown of its agent's inbox, marked delivered in the same
// transaction (src/domain/delivery.ts). A method, not a tool: it is the hook's, not the model's
// (a model calling it would swallow its own messages before its hooks could frame them).
import type { Kernel } from "../domain/kernel.ts";
import type { HookPoint } from "../domain/delivery.ts";
import { MAX_ID_LENGTH } from "./tools/args.ts";
import { messageView } from "./tools/messages.ts";

const POINTS: readonly HookPoint[] = ["session", "tool", "prompt", "stop"];

/** The result, or the reason the params are refused. */
export async function deliverMethod(kernel: Kernel, params: Record<string, unknown>): Promise<{ result: unknown } | { error: string }> {
  const { agent_id: agentId, point, held } = params;
  if (typeof agentId !== "string" || agentId === "" || agentId.length > MAX_ID_LENGTH) return { error: `agent_id must be a non-empty string of at most ${MAX_ID_LENGTH} characters` };
  if (typeof point !== "string" || !(POINTS as readonly string[]).includes(point)) return { error: `point must be one of ${POINTS.join(", ")}` };
  if (held !== undefined && typeof held !== "boolean") return { error: "held must be a boolean" };
  const d = await kernel.messages.delivery.take(agentId, point as HookPoint, held === true);
  return { result: { messages: d.messages.map(messageView), hold_for: d.holdFor.map(messageView), more: d.more } };
}
