// GitHub Copilot CLI's command hooks (a hooks file `{version: 1, hooks: {…}}`, camelCase events),
// as documented at https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference
// and seen with @github/copilot 1.0.102:
// - Input: JSON on stdin with sessionId, timestamp, cwd; preToolUse and postToolUse add toolName
//   and toolArgs (a JSON string of the tool's arguments); sessionStart adds source and
//   initialPrompt; userPromptSubmitted adds prompt; agentStop adds stopReason and
//   stop_hook_active (true when this stop follows a block of ours).
// - preToolUse: {"permissionDecision":"deny","permissionDecisionReason":"..."} denies the call
//   and the reason reaches the model. A camelCase preToolUse entry has no matcher, so it runs for
//   every tool; the file-writing tools are `edit` and `create` ({path, …}), `str_replace_editor`
//   ({command: create|str_replace|insert, path}) and `apply_patch` (a patch's file headers).
// - sessionStart, postToolUse, userPromptSubmitted: {"additionalContext":"..."} is injected into
//   the conversation: the identity and policy, and other agents' messages (inbox.ts).
// - agentStop: {"decision":"block","reason":"..."} keeps the agent going; the reason becomes the
//   next user message. Copilot ends the turn after 8 consecutive blocks; we send at most one.
// - Exit 0 with no output lets the event proceed; a command's timeoutSec is 30 s by default.
// - No output field is documented as shown to the user, so a fail-open warning goes to stderr,
//   which Copilot writes to its log.
import { patchTargets } from "./codex.ts";
import { type HookAdapter, json, obj, str } from "./shared.ts";

/** Copilot CLI's built-in tools that write files (its tool catalogue's `edit` category). */
export const COPILOT_EDIT_TOOLS = ["edit", "create", "str_replace_editor", "apply_patch"] as const;

/** toolArgs arrives as a JSON string (an object from the SDK); a patch may be the bare string. */
function toolArgs(input: Record<string, unknown>): { args?: Record<string, unknown>; raw?: string } {
  const v = input.toolArgs;
  if (typeof v === "string") {
    try {
      return { args: obj(JSON.parse(v)), raw: v };
    } catch {
      return { raw: v };
    }
  }
  return { args: obj(v) };
}

export const copilotCli: HookAdapter = {
  client: "copilot-cli",
  docs: ["https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference"],
  events: ["session-start", "pre-edit", "post-tool", "prompt", "stop"],
  sessionId: (input) => str(input.sessionId) ?? str(input.session_id),
  cwd: (input) => str(input.cwd),
  editTargets(input) {
    const tool = str(input.toolName);
    if (!tool || !(COPILOT_EDIT_TOOLS as readonly string[]).includes(tool)) return undefined;
    const { args, raw } = toolArgs(input);
    if (tool === "str_replace_editor" && str(args?.command) === "view") return undefined;
    if (tool === "apply_patch") {
      const patch = str(args?.input) ?? str(args?.patch) ?? (args === undefined ? raw : undefined);
      if (patch) return patchTargets(patch);
    }
    const file = str(args?.path) ?? str(args?.file_path);
    return file ? [file] : [];
  },
  stopAlreadyContinued: (input) => input.stop_hook_active === true || input.stopHookActive === true,
  allow: () => ({ code: 0 }),
  sessionContext: (text) => ({ code: 0, stdout: json({ additionalContext: text }) }),
  denyEdit: (message) => ({ code: 0, stdout: json({ permissionDecision: "deny", permissionDecisionReason: message }) }),
  blockStop: (reason) => ({ code: 0, stdout: json({ decision: "block", reason }) }),
  context: (_event, text) => ({ code: 0, stdout: json({ additionalContext: text }) }),
  warnUser: (out, message) => ({ ...out, stderr: `${out.stderr ?? ""}${message}\n` }),
};
