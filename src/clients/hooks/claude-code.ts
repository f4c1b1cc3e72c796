// Claude Code's hooks, as its hooks reference documents them:
//   https://code.claude.com/docs/en/hooks (formerly https://docs.anthropic.com/en/docs/claude-code/hooks)
// - Input: JSON on stdin with session_id, transcript_path, cwd, hook_event_name, plus
//   tool_name/tool_input for PreToolUse (Write/Edit/MultiEdit carry tool_input.file_path, an
//   absolute path; NotebookEdit carries tool_input.notebook_path) and stop_hook_active for Stop.
// - SessionStart: stdout JSON {"hookSpecificOutput":{"hookEventName":"SessionStart",
//   "additionalContext":"..."}} "adds the string to the context".
// - PreToolUse (matcher Edit|Write|MultiEdit|NotebookEdit): {"hookSpecificOutput":
//   {"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"..."}}
//   "prevents the tool call from executing"; the reason "is shown to Claude".
// - Stop: {"decision":"block","reason":"..."} "prevents Claude from stopping. You must populate
//   reason for Claude to know how to proceed." stop_hook_active is true when Claude is already
//   continuing because of a stop hook: check it "to prevent Claude Code from running indefinitely".
// - PostToolUse (every tool: no matcher) and UserPromptSubmit: {"hookSpecificOutput":
//   {"hookEventName":"PostToolUse"|"UserPromptSubmit","additionalContext":"..."}} adds the text to
//   what Claude reads next: how other agents' messages reach the model (inbox.ts).
// - PreToolUse may also carry hookSpecificOutput.additionalContext, added to Claude's context
//   before the tool runs: how another agent's uncommitted edit of the file is told (worktree.ts).
// - Any event's output may carry `systemMessage`, "a warning message shown to the user": how a
//   hook that fails open says so (the decision is unchanged).
// - SessionStart runs on startup, resume, clear and compact (the matcher setup writes), so the
//   identity, the policy and what others hold come back after a compaction.
// - Exit 0 with no output lets the event proceed. Each command hook has a timeout (60 s unless
//   the settings' `timeout` says otherwise); ours answers within HOOK_DEADLINE_MS.
import { CLAUDE_STYLE_ANSWERS, type HookAdapter, json, obj, str } from "./shared.ts";

/** The tools that write files (the PreToolUse matcher `airlock setup` installs). */
export const CLAUDE_EDIT_TOOLS = ["Edit", "Write", "MultiEdit", "NotebookEdit"] as const;

export const claudeCode: HookAdapter = {
  client: "claude-code",
  docs: ["https://code.claude.com/docs/en/hooks"],
  events: ["session-start", "pre-edit", "post-tool", "prompt", "stop"],
  sessionId: (input) => str(input.session_id),
  cwd: (input) => str(input.cwd),
  editTargets(input) {
    const tool = str(input.tool_name);
    if (!tool || !(CLAUDE_EDIT_TOOLS as readonly string[]).includes(tool)) return undefined;
    const ti = obj(input.tool_input);
    const file = str(ti?.file_path) ?? str(ti?.notebook_path);
    return file ? [file] : [];
  },
  ...CLAUDE_STYLE_ANSWERS,
  // PreToolUse's additionalContext is added to Claude's context, and the tool call goes ahead.
  noteEdit: (message) => ({ code: 0, stdout: json({ hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: message } }) }),
};
