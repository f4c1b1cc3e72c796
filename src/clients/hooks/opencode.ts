// OpenCode has no command hooks: its hooks are JS plugins (https://opencode.ai/docs/plugins/).
// The plugin `airlock setup opencode` installs (src/clients/opencode-plugin.ts) runs
// `airlock hook opencode <event>` with a JSON object on stdin, so the decisions stay the shared
// ones (shared.ts) and the plugin only carries them into OpenCode. This wire is ours, between our
// plugin and our CLI:
// - Input: {session_id, cwd, tool?, args?}: session_id is OpenCode's session id (`ses_…`), cwd
//   the plugin's `directory`, and for pre-edit the `tool.execute.before` input's tool name and
//   its output.args (the model's arguments: edit/write/multiedit take `filePath`; patch and
//   apply_patch take `patchText` with `*** Add/Update/Delete File:` headers).
// - Output: one JSON object: {} (go on), {context} (the session's identity, policy and summary:
//   the plugin merges it into system[0]), {decision: "deny", reason} (the plugin throws it from
//   tool.execute.before: the tool does not run, the model reads the reason), {decision: "block",
//   reason} (at session.idle: the plugin sends the reason as a new prompt), and `warning` on any
//   of them (a fail-open: the plugin logs it through client.app.log).
import { patchTargets } from "./codex.ts";
import { type HookAdapter, json, obj, str, withJsonField } from "./shared.ts";

/** OpenCode 1.18's built-in tools that write files. */
export const OPENCODE_EDIT_TOOLS = ["edit", "write", "multiedit", "patch", "apply_patch"] as const;

export const opencode: HookAdapter = {
  client: "opencode",
  docs: ["https://opencode.ai/docs/plugins/", "https://opencode.ai/docs/tools/"],
  events: ["session-start", "pre-edit", "post-tool", "prompt", "stop"],
  sessionId: (input) => str(input.session_id),
  cwd: (input) => str(input.cwd),
  editTargets(input) {
    const tool = str(input.tool);
    if (!tool || !(OPENCODE_EDIT_TOOLS as readonly string[]).includes(tool)) return undefined;
    const args = obj(input.args);
    const patch = str(args?.patchText);
    if (patch !== undefined) return patchTargets(patch);
    const file = str(args?.filePath);
    return file ? [file] : [];
  },
  // The plugin wakes a session once per offer and per message (it keeps the offers it woke for).
  stopAlreadyContinued: () => false,
  allow: () => ({ code: 0, stdout: json({}) }),
  sessionContext: (text) => ({ code: 0, stdout: json({ context: text }) }),
  denyEdit: (reason) => ({ code: 0, stdout: json({ decision: "deny", reason }) }),
  blockStop: (reason) => ({ code: 0, stdout: json({ decision: "block", reason }) }),
  context: (_event, text) => ({ code: 0, stdout: json({ context: text }) }),
  warnUser: (out, message) => withJsonField(out, "warning", message),
};
