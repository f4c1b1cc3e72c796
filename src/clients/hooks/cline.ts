// Cline's hooks, as documented at https://docs.cline.bot/customization/hooks and
// https://docs.cline.bot/features/hooks/hook-reference: an executable file named after the hook
// (TaskStart, TaskResume, PreToolUse, PostToolUse, UserPromptSubmit, …) in ~/Documents/Cline/Hooks/
// or DIR/.clinerules/hooks/.
// - Input: JSON on stdin with clineVersion, hookName, timestamp, taskId, workspaceRoots, userId,
//   plus one object named after the hook: preToolUse {toolName, parameters}, postToolUse
//   {toolName, parameters, result, success, executionTimeMs}, userPromptSubmit {prompt}, taskStart
//   and taskResume {taskMetadata}.
// - Output: JSON on stdout, {"cancel": bool, "contextModification": "...", "errorMessage": "..."}.
//   `cancel: true` stops the operation (PreToolUse: the tool does not run) and errorMessage says
//   why; contextModification is added to the conversation (the model reads it with its next
//   request): the identity and policy at TaskStart/TaskResume, other agents' messages after a tool
//   (PostToolUse) or with the user's prompt (UserPromptSubmit).
// - The file-writing tools are write_to_file and replace_in_file ({path, …}) and apply_patch
//   (a patch in `input`).
// - Cline has no hook that can keep a task from completing (TaskComplete is a notification), so
//   there is no stop point: an offered slot is not held there.
// - No output field is documented as shown to the user apart from a cancel's errorMessage, so a
//   fail-open warning goes to stderr (Cline's hook log).
import { patchTargets } from "./codex.ts";
import { type HookAdapter, json, obj, str } from "./shared.ts";

export const CLINE_EDIT_TOOLS = ["write_to_file", "replace_in_file", "apply_patch"] as const;

export const cline: HookAdapter = {
  client: "cline",
  docs: ["https://docs.cline.bot/customization/hooks", "https://docs.cline.bot/features/hooks/hook-reference"],
  events: ["session-start", "pre-edit", "post-tool", "prompt"],
  sessionId: (input) => str(input.taskId),
  cwd(input) {
    const roots = Array.isArray(input.workspaceRoots) ? input.workspaceRoots : [];
    return str(roots[0]);
  },
  editTargets(input) {
    const pre = obj(input.preToolUse);
    const tool = str(pre?.toolName);
    if (!tool || !(CLINE_EDIT_TOOLS as readonly string[]).includes(tool)) return undefined;
    const params = obj(pre?.parameters);
    if (tool === "apply_patch") {
      const patch = str(params?.input) ?? str(params?.patch);
      return patch ? patchTargets(patch) : [];
    }
    const file = str(params?.path) ?? str(params?.absolutePath);
    return file ? [file] : [];
  },
  stopAlreadyContinued: () => false,
  allow: () => ({ code: 0, stdout: json({ cancel: false }) }),
  sessionContext: (text) => ({ code: 0, stdout: json({ cancel: false, contextModification: text }) }),
  denyEdit: (message) => ({ code: 0, stdout: json({ cancel: true, errorMessage: message, contextModification: message }) }),
  // Never called (no stop event): the nearest honest answer is to let it go.
  blockStop: () => ({ code: 0, stdout: json({ cancel: false }) }),
  context: (_event, text) => ({ code: 0, stdout: json({ cancel: false, contextModification: text }) }),
  warnUser: (out, message) => ({ ...out, stderr: `${out.stderr ?? ""}${message}\n` }),
};
