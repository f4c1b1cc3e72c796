// Gemini CLI's hooks, as its hooks reference documents them:
//   https://geminicli.com/docs/hooks/reference
//   (source: https://github.com/google-gemini/gemini-cli/blob/main/docs/hooks/reference.md)
// - Input: JSON on stdin with session_id, transcript_path, cwd, hook_event_name, timestamp;
//   BeforeTool adds tool_name and tool_input (the model's raw arguments); AfterAgent adds
//   prompt, prompt_response and stop_hook_active.
// - "Silence is Mandatory": stdout carries only the final JSON, logs go to stderr.
//   Exit 0 = stdout parsed as JSON; other non-2 codes are warnings and the CLI continues.
// - SessionStart: hookSpecificOutput.additionalContext is "injected as the first turn in
//   history" (interactive) or prepended to the prompt (non-interactive). Advisory only.
// - BeforeTool (matcher `write_file|replace`, the file-writing tools, whose file_path argument
//   names the target): {"decision":"deny","reason":"..."} prevents the tool from executing; the
//   reason "is sent to the agent as a tool error". The turn continues.
// - AfterAgent (fires once per turn after the final response; the stop point):
//   {"decision":"deny","reason":"..."} rejects the response and "is sent to the agent as a new
//   prompt", so the agent keeps working.
// - AfterTool (every tool: no matcher): hookSpecificOutput.additionalContext is "appended to the
//   tool result for the agent"; BeforeAgent (after the user's prompt): "appended to the prompt for
//   this turn only". How other agents' messages reach the model (inbox.ts).
// - Every event's output may carry `systemMessage`, shown to the user (how a fail-open is told).
// - Timeout: the hook's `timeout` in milliseconds, 60000 by default.
import { type HookAdapter, json, obj, str, withJsonField } from "./shared.ts";

/** Gemini CLI's built-in tools that write a file named by tool_input.file_path. */
export const GEMINI_EDIT_TOOLS = ["write_file", "replace"] as const;

export const geminiCli: HookAdapter = {
  client: "gemini-cli",
  docs: ["https://geminicli.com/docs/hooks/reference"],
  events: ["session-start", "pre-edit", "post-tool", "prompt", "stop"],
  sessionId: (input) => str(input.session_id),
  cwd: (input) => str(input.cwd),
  editTargets(input) {
    const tool = str(input.tool_name);
    if (!tool || !(GEMINI_EDIT_TOOLS as readonly string[]).includes(tool)) return undefined;
    const ti = obj(input.tool_input);
    const file = str(ti?.file_path) ?? str(ti?.absolute_path);
    return file ? [file] : [];
  },
  stopAlreadyContinued: (input) => input.stop_hook_active === true,
  // Exit 0 means "stdout is parsed as JSON": an empty object is the quiet answer.
  allow: () => ({ code: 0, stdout: json({}) }),
  sessionContext: (text) => ({ code: 0, stdout: json({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: text } }) }),
  denyEdit: (message) => ({ code: 0, stdout: json({ decision: "deny", reason: message }) }),
  blockStop: (reason) => ({ code: 0, stdout: json({ decision: "deny", reason }) }),
  context: (event, text) => ({
    code: 0,
    stdout: json({ hookSpecificOutput: { hookEventName: event === "prompt" ? "BeforeAgent" : "AfterTool", additionalContext: text } }),
  }),
  // `systemMessage` is a common output field "displayed to the user" in the terminal.
  warnUser: (out, message) => withJsonField(out, "systemMessage", message),
};
