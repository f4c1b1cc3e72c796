// Kiro CLI's agent hooks, as documented at https://kiro.dev/docs/cli/hooks and
// https://kiro.dev/docs/cli/custom-agents/configuration-reference: `hooks` in an agent file
// (~/.kiro/agents/NAME.json or DIR/.kiro/agents/NAME.json), each entry {command, matcher?}.
// - Input: JSON on stdin with hook_event_name and cwd; tool hooks add tool_name and tool_input
//   (postToolUse also tool_response). A session id is not documented: when the JSON carries
//   `session_id` (Kiro IDE 1.x does) it is used, else the session is named after its directory.
// - Output by exit code: 0 = success, STDOUT is captured; for agentSpawn and userPromptSubmit it
//   is added to the agent's context (the identity and policy; other agents' messages with the
//   user's prompt). 2 = (preToolUse only) the tool is blocked and STDERR is returned to the LLM.
//   Any other code = the hook failed, STDERR is shown to the user as a warning, and the agent goes
//   on: how a fail-open is told.
// - The file-writing tool is fs_write (`write` in newer releases) with tool_input.path.
// - postToolUse's and stop's output is not read, so neither can deliver a message or hold a stop:
//   setup wires neither (a message handed over there would be marked delivered and never seen).
import { createHash } from "node:crypto";
import { type HookAdapter, type HookOutput, obj, str } from "./shared.ts";

export const KIRO_EDIT_TOOLS = ["fs_write", "write"] as const;

export const kiro: HookAdapter = {
  client: "kiro",
  docs: ["https://kiro.dev/docs/cli/hooks"],
  events: ["session-start", "pre-edit", "prompt"],
  sessionId(input) {
    const id = str(input.session_id) ?? str(input.sessionId);
    if (id) return id;
    const cwd = str(input.cwd);
    return cwd ? `dir-${createHash("sha256").update(cwd).digest("hex").slice(0, 12)}` : undefined;
  },
  cwd: (input) => str(input.cwd),
  editTargets(input) {
    const tool = str(input.tool_name);
    if (!tool || !(KIRO_EDIT_TOOLS as readonly string[]).includes(tool)) return undefined;
    const ti = obj(input.tool_input);
    const file = str(ti?.path) ?? str(ti?.file_path);
    return file ? [file] : [];
  },
  stopAlreadyContinued: () => false,
  allow: () => ({ code: 0 }),
  sessionContext: (text) => ({ code: 0, stdout: `${text}\n` }),
  denyEdit: (message) => ({ code: 2, stderr: `${message}\n` }),
  blockStop: () => ({ code: 0 }),
  context: (_event, text) => ({ code: 0, stdout: `${text}\n` }),
  // A bare allow becomes a failed hook (exit 1), whose STDERR Kiro shows the user; an answer that
  // carries context keeps exit 0 (its STDOUT must reach the model) and logs the warning on STDERR.
  warnUser: (out: HookOutput, message) => (out.stdout ? { ...out, stderr: `${out.stderr ?? ""}${message}\n` } : { ...out, code: out.code === 0 ? 1 : out.code, stderr: `${out.stderr ?? ""}${message}\n` }),
};
