// The real Gemini CLI (npm @google/gemini-cli, pinned) in a headless `gemini -p` session, with the
// model played by a scripted Gemini API server on loopback, on a machine set up the way a user
// sets it up: a daemon on a port that is not the default one, a Gemini CLI already set to API-key
// auth (`security.auth.selectedType: "gemini-api-key"` in ~/.gemini/settings.json, what its auth
// dialog saves; GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL in the environment), `airlock setup
// gemini-cli` with nothing else in the environment, then `gemini -p PROMPT --skip-trust
// --approval-mode auto_edit --output-format stream-json`: `--approval-mode auto_edit` is what a
// headless user passes to let the agent edit, `--skip-trust` what Gemini CLI's docs tell a headless
// user to pass in a folder never trusted (it trusts the folder for this session and writes nothing;
// without it `gemini -p` exits 55). The test writes no trustedFolders.json.
//
// The story and the shared tests are liveScenarios (test/helpers/live-scenarios.ts); here is what
// is Gemini CLI's own. Session 1 (one `gemini -p`): read_file three files; write_file src/locked.ts
// (denied by the BeforeTool hook); write_file lib/free.ts; replace in docs/readme.md; then the
// shared claim_paths (`mcp_airlock_claim_paths`), slot and stop turns, the stop being the
// AfterAgent hook. Session 2 (`gemini -p … --resume <session id>`): the identity is injected again
// on resume.
// Compaction is not covered: Gemini CLI compresses its history with a side call and fires
// PreCompress, not SessionStart, and Airlock hooks neither.
import { expect } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { liveScenarios, PROMPT1, PROMPT2 } from "../helpers/live-scenarios.ts";
import { GEMINI_BIN, type LiveWorld, runBounded } from "../helpers/live-session.ts";
import type { ToolResult } from "../helpers/model-server.ts";

/** Gemini CLI names an MCP tool mcp_<server>_<tool>. */
const MCP = "mcp_airlock_";

const FLAGS = ["--skip-trust", "--approval-mode", "auto_edit", "--output-format", "stream-json"];

const gemini = (w: LiveWorld, args: string[]) =>
  runBounded([GEMINI_BIN, ...args, ...FLAGS], {
    cwd: w.repo,
    env: w.userEnv({ GEMINI_API_KEY: "live-test-key", GOOGLE_GEMINI_BASE_URL: w.model.url }),
  });

/** The result of the `tool` call on `rel` (its file_path ends with it). */
const onFile = (tool: string) => (results: ToolResult[], rel: string) => results.find((x) => x.name === tool && String((x.input as any)?.file_path).endsWith(rel));

liveScenarios(
  {
    id: "gemini-cli",
    name: "Gemini CLI",
    title: "Gemini CLI, headless, set up as a user sets it up",
    bin: GEMINI_BIN,
    what: "Gemini CLI",

    prepare(w) {
      // What a Gemini CLI user already has: API-key auth chosen. Nothing else, and nothing of Airlock's.
      mkdirSync(join(w.home, ".gemini"), { recursive: true });
      writeFileSync(join(w.home, ".gemini", "settings.json"), `${JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2)}\n`);
    },
    run: (w, prompt) => gemini(w, ["-p", prompt]),
    resume: (w, sid, prompt) => gemini(w, ["-p", prompt, "--resume", sid]),
    sessionId: (run) => run.events.find((e) => e.type === "init")?.session_id,

    /** The start of Airlock's stop reason: an AfterAgent deny sends it to the model as a new prompt. */
    stopFeedback: "Airlock: your turn has come",
    airlockCall: (tool, input) => ({ name: `${MCP}${tool}`, input }),
    airlockResult: (tool) => `${MCP}${tool}`,
    granted: (text) => {
      const m = /"granted":\s*(true|false)/.exec(text)?.[1];
      return m === undefined ? undefined : m === "true";
    },

    opening: (file) => [
      { tools: ["src/locked.ts", "lib/free.ts", "docs/readme.md"].map((f) => ({ name: "read_file", input: { file_path: file(f) } })) },
      { tools: [{ name: "write_file", input: { file_path: file("src/locked.ts"), content: "export const locked = 2;\n" } }] },
      { tools: [{ name: "write_file", input: { file_path: file("lib/free.ts"), content: "export const free = 2;\n" } }] },
      { tools: [{ name: "replace", input: { file_path: file("docs/readme.md"), instruction: "Update the old line.", old_string: "old line", new_string: "new line" } }] },
    ],
    lookAgain: (file) => ({ tools: [{ name: "read_file", input: { file_path: file("docs/readme.md") } }] }),

    write: { title: "a write_file", result: onFile("write_file") },
    edit: { title: "a replace", result: onFile("replace") },
    expectDenied: (res) => expect(res.isError).toBe(true),
    expectApplied: (res) => expect(res?.isError).toBe(false),

    expectContext(context) {
      // Headless, Gemini CLI prepends the context to the prompt: one user text, <hook_context>…</hook_context> then the prompt.
      expect(context?.kind === "text" && context.role).toBe("user");
      expect(context?.kind === "text" && context.text).toContain(PROMPT1);
    },
    expectClaimed(res) {
      expect(res.isError).toBe(false);
      expect(res.text).toMatch(/"granted":\s*true/);
    },
    expectResumed(first, s) {
      // The same session, its history resent: the first session's tool calls are in it. Gemini CLI
      // 0.61.0 leaves out the first prompt (and the SessionStart context prepended to it), so the
      // fresh SessionStart context is the only copy of the identity the resumed model has.
      expect(s.run2?.events.find((e) => e.type === "init")?.session_id).toBe(s.sid);
      expect(first.items.some((it) => it.kind === "call" && it.name === "write_file")).toBe(true);
      expect(first.lastUserText).toContain(PROMPT2);
      expect(first.lastUserText).toContain("agent-c"); // news since the first session
    },

    names: {
      sessionsEnd: "setup succeeds and the session ends normally",
      stopHeld: "a stop (AfterAgent) with a pending slot offer is held once, then allowed",
    },
    // No `compaction`: see the note at the top.
  },
  (s, live) => {
    live("--skip-trust trusts the folder for the session only: nothing is written", () => {
      expect(existsSync(join(s.w.home, ".gemini", "trustedFolders.json"))).toBe(false);
      expect(existsSync(join(s.w.repo, ".gemini"))).toBe(false);
    });
  },
);
