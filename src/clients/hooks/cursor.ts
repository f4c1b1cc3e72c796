// Cursor's agent hooks (hooks.json `version: 1`), as documented at
//   https://cursor.com/docs/hooks (formerly https://cursor.com/docs/agent/hooks)
// - Input: JSON on stdin; every event carries conversation_id, generation_id, hook_event_name,
//   workspace_roots (plus model, cursor_version, user_email, transcript_path where known).
//   preToolUse adds tool_name and tool_input (Write carries {file_path, content}; the edit
//   tools `Write|StrReplace|Edit|Delete` name their file in tool_input.file_path).
// - Exit codes: 0 = success, the JSON on stdout is read; 2 = deny/block the action; other
//   codes are hook errors and the action proceeds (fail open unless `failClosed`).
// - preToolUse (a permission event, like beforeShellExecution/beforeMCPExecution):
//   {"permission":"deny","user_message":"...","agent_message":"..."} — agent_message goes to the
//   model, user_message to the human. We also exit 2 so the edit is denied even by a Cursor
//   that reads only the exit code.
// - sessionStart: {"additional_context":"..."} is injected into the session's context.
// - stop (input adds status and loop_count): {"followup_message":"..."} is submitted as the
//   next user message, so the agent keeps working; Cursor caps these auto follow-ups
//   (loop_limit, 5 by default). We send at most one: loop_count > 0 means we already did.
// - postToolUse (every tool: no matcher): {"additional_context":"..."} is added to the
//   conversation after the tool's result: how other agents' messages reach the model (inbox.ts).
//   Cursor's beforeSubmitPrompt can only let a prompt through or stop it, so there is no prompt
//   point here. (Read in Cursor's hooks page; no Cursor on this machine to run it.)
// - Each hook has a `timeout` in hooks.json; ours answers within HOOK_DEADLINE_MS.
import { type HookAdapter, json, obj, str } from "./shared.ts";

export const CURSOR_EDIT_TOOLS = ["Write", "StrReplace", "Edit", "Delete"] as const;

export const cursor: HookAdapter = {
  client: "cursor",
  docs: ["https://cursor.com/docs/hooks"],
  events: ["session-start", "pre-edit", "post-tool", "stop"],
  sessionId: (input) => str(input.conversation_id) ?? str(input.session_id),
  cwd(input) {
    const roots = Array.isArray(input.workspace_roots) ? input.workspace_roots : [];
    return str(input.cwd) ?? str(roots[0]);
  },
  editTargets(input) {
    const tool = str(input.tool_name);
    if (!tool || !(CURSOR_EDIT_TOOLS as readonly string[]).includes(tool)) return undefined;
    const ti = obj(input.tool_input);
    const file = str(ti?.file_path) ?? str(ti?.path);
    return file ? [file] : [];
  },
  stopAlreadyContinued: (input) => typeof input.loop_count === "number" && input.loop_count > 0,
  allow: () => ({ code: 0, stdout: json({}) }),
  sessionContext: (text) => ({ code: 0, stdout: json({ additional_context: text }) }),
  denyEdit: (message) => ({
    code: 2,
    stdout: json({ permission: "deny", user_message: message.split("\n")[0], agent_message: message }),
    stderr: `${message}\n`,
  }),
  blockStop: (reason) => ({ code: 0, stdout: json({ followup_message: reason }) }),
  context: (_event, text) => ({ code: 0, stdout: json({ additional_context: text }) }),
  // Cursor documents a user-facing field only next to a permission decision (user_message), and
  // setting `permission: "allow"` would skip Cursor's own approval: the warning stays on stderr,
  // which Cursor shows in its Hooks output channel.
  warnUser: (out, message) => ({ ...out, stderr: `${out.stderr ?? ""}${message}\n` }),
};
