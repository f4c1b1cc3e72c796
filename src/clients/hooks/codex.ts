// Codex CLI's hooks, as documented at https://developers.openai.com/codex/hooks and pinned by the
// generated wire schemas in the Codex repository
// (https://github.com/openai/codex/tree/main/codex-rs/hooks/schema/generated):
// - Input: JSON on stdin with session_id, transcript_path, cwd, hook_event_name, model, plus
//   tool_name/tool_input for PreToolUse and stop_hook_active for Stop (the Claude Code shape).
// - File edits go through `apply_patch`: since openai/codex#18391 it emits PreToolUse with
//   tool_name "apply_patch" and the raw patch body as tool_input.command (hooks match it with
//   the matcher `^apply_patch$`; `Edit`/`Write` are matcher aliases). The files it writes are the
//   patch's `*** Add File:`, `*** Update File:`, `*** Delete File:` and `*** Move to:` headers,
//   relative to cwd.
// - SessionStart (pre-tool-use/session-start output schemas): {"hookSpecificOutput":
//   {"hookEventName":"SessionStart","additionalContext":"..."}} is added to the model's context.
// - PreToolUse: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
//   "permissionDecisionReason":"..."}} blocks the call.
// - Stop (stop.command.output.schema.json): {"decision":"block","reason":"..."}; the reason must
//   be non-blank and Codex continues the turn with it.
// - SessionStart's `source` is startup, resume, clear, compact or fork (session-start.command.input
//   in 0.171.0): a compaction starts again with source "compact", so the context is re-injected.
//   PostCompact's output has no additionalContext, so it is not used.
// - PostToolUse (post-tool-use output schema, every tool: no matcher) and UserPromptSubmit:
//   {"hookSpecificOutput":{"hookEventName":"PostToolUse"|"UserPromptSubmit","additionalContext":
//   "..."}} is added to the model's context: how other agents' messages reach it.
// - Every output schema has `systemMessage` (shown to the user): how a fail-open is told.
// - Codex HTML-escapes hook text, so nothing we send holds `<` or `>`.
// - Exit 0 with no output lets the event proceed; each handler has a configurable `timeout`.
import { CLAUDE_STYLE_ANSWERS, type HookAdapter, obj, str } from "./shared.ts";

/**
 * Our own text has no `<` or `>`; data from other agents (a claim's reason, an agent id) might.
 * Codex would HTML-escape them, so they become the look-alike single angle quotes.
 */
export const noAngles = (text: string): string => text.replaceAll("<", "\u2039").replaceAll(">", "\u203a");

// Codex reads a patch's headers from the trimmed line (so an indented header counts too).
const PATCH_HEADER = /^\s*\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/gm;

/** The files an apply_patch body writes (each once, in order). */
export function patchTargets(patch: string): string[] {
  return [...new Set([...patch.matchAll(PATCH_HEADER)].map((m) => m[1]!))];
}

export const codex: HookAdapter = {
  client: "codex",
  docs: ["https://developers.openai.com/codex/hooks", "https://github.com/openai/codex/tree/main/codex-rs/hooks/schema/generated"],
  events: ["session-start", "pre-edit", "post-tool", "prompt", "stop"],
  sessionId: (input) => str(input.session_id),
  cwd: (input) => str(input.cwd),
  editTargets(input) {
    const tool = str(input.tool_name);
    if (tool !== "apply_patch" && tool !== "Edit" && tool !== "Write") return undefined;
    const ti = obj(input.tool_input);
    const patch = str(ti?.command) ?? str(ti?.input) ?? (typeof input.tool_input === "string" ? input.tool_input : undefined);
    return patch ? patchTargets(patch) : [];
  },
  ...CLAUDE_STYLE_ANSWERS,
  sessionContext: (text) => CLAUDE_STYLE_ANSWERS.sessionContext(noAngles(text)),
  denyEdit: (message) => CLAUDE_STYLE_ANSWERS.denyEdit(noAngles(message)),
  blockStop: (reason) => CLAUDE_STYLE_ANSWERS.blockStop(noAngles(reason)),
  context: (event, text) => CLAUDE_STYLE_ANSWERS.context(event, noAngles(text)),
  warnUser: (out, message) => CLAUDE_STYLE_ANSWERS.warnUser(out, noAngles(message)),
};
