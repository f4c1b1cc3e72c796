// The real Codex CLI (npm @openai/codex, pinned; its native binary is the optional dependency
// @openai/codex-linux-x64) in headless `codex exec` sessions, with the model played by a scripted
// Responses API server on loopback, on a machine set up the way a user sets it up: a daemon on a
// port that is not the default one, a Codex already pointed at its model provider, `airlock setup
// codex` with nothing else in the environment (then the one export setup tells the user to add to
// their shell profile), and `codex exec --json -s workspace-write` (what a headless user passes to
// let the agent edit). No hook trust is written by the test: Codex runs a hook only once its hash
// is trusted, and recording that is setup's job.
//
// The story and the shared tests are liveScenarios (test/helpers/live-scenarios.ts); here is what
// is Codex's own. Session 1 (one `codex exec`): apply_patch src/locked.ts (denied); apply_patch
// lib/free.ts; apply_patch docs/readme.md; tool_search finds Airlock's deferred MCP tools; then the
// shared claim_paths, slot and Stop turns. Session 2 (`codex exec resume`): the identity is
// injected again on resume; the model's first answer reports a full context, Codex compacts
// mid-turn, and the identity is injected again.
import { expect } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { liveScenarios } from "../helpers/live-scenarios.ts";
import { allResults, CODEX_BIN, type LiveWorld, runBounded } from "../helpers/live-session.ts";
import type { ToolResult } from "../helpers/model-server.ts";

/** Codex's wrapper around a Stop hook's reason, as the model receives it (a user message). */
const STOP_FEEDBACK = "<hook_prompt";
/** Far past any model's context window: Codex then compacts before its next request. */
const FULL_CONTEXT_TOKENS = 5_000_000;
/** The model provider a Codex user already has; its key is the provider's env_key. */
const MODEL_KEY_ENV = "MOCK_MODEL_API_KEY";

const patch = (file: string, from: string, to: string) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

let exportsToken = false;
const codexEnv = (w: LiveWorld) => {
  const extra: Record<string, string> = { [MODEL_KEY_ENV]: "sk-live-test" };
  // The line setup tells the user to put in their shell profile, when it does.
  if (exportsToken) extra.AIRLOCK_TOKEN = readFileSync(join(w.home, ".airlock", "token"), "utf8").trim();
  return w.userEnv(extra);
};
const codex = (w: LiveWorld, args: string[]) => runBounded([CODEX_BIN, ...args], { cwd: w.repo, env: codexEnv(w) });

/** The apply_patch that touches `rel` (its freeform input names the file). */
const patchOf = (results: ToolResult[], rel: string) => results.find((x) => x.name === "apply_patch" && String(x.input).includes(rel));
/** `"granted":true` or `"granted":false` in Codex's text of an MCP result. */
const grantedField = (text: string) => {
  const m = /"granted":(true|false)/.exec(text)?.[1];
  return m === undefined ? undefined : m === "true";
};

liveScenarios(
  {
    id: "codex",
    name: "Codex",
    title: "Codex, headless, set up as a user sets it up",
    bin: CODEX_BIN,
    what: "Codex CLI",

    prepare(w) {
      // What a Codex user already has: a model provider (here, the scripted model). Nothing of Airlock's.
      mkdirSync(join(w.home, ".codex"), { recursive: true });
      writeFileSync(
        join(w.home, ".codex", "config.toml"),
        [
          `model = "gpt-5.5"`,
          `model_provider = "mock"`,
          ``,
          `[model_providers.mock]`,
          `name = "scripted model"`,
          `base_url = "${w.model.url}/v1"`,
          `env_key = "${MODEL_KEY_ENV}"`,
          `wire_api = "responses"`,
          `supports_websockets = false`,
          ``,
        ].join("\n"),
      );
    },
    afterSetup(_w, setupOut) {
      exportsToken = /export AIRLOCK_TOKEN=/.test(setupOut.stdout);
    },
    run: (w, prompt) => codex(w, ["exec", "--json", "-s", "workspace-write", prompt]),
    resume: (w, tid, prompt) => codex(w, ["exec", "resume", "--json", tid, prompt]),
    sessionId: (run) => run.events.find((e) => e.type === "thread.started")?.thread_id,

    stopFeedback: STOP_FEEDBACK,
    airlockCall: (tool, input) => ({ namespace: "mcp__airlock", name: tool, input }),
    airlockResult: (tool) => `mcp__airlock__${tool}`,
    granted: grantedField,

    opening: () => [
      { tools: [{ name: "apply_patch", input: patch("src/locked.ts", "export const locked = 1;", "export const locked = 2;") }] },
      { tools: [{ name: "apply_patch", input: patch("lib/free.ts", "export const free = 1;", "export const free = 2;") }] },
      { tools: [{ name: "apply_patch", input: patch("docs/readme.md", "old line", "new line") }] },
      // Codex offers MCP tools only through its client-side tool search, as a model finds them.
      { tools: [{ kind: "tool_search", name: "tool_search", input: { query: "airlock claim paths slot", limit: 8 } }] },
    ],
    lookAgain: () => ({ tools: [{ name: "exec_command", input: { cmd: "cat docs/readme.md" } }], inputTokens: FULL_CONTEXT_TOKENS }),

    write: { title: "an apply_patch", result: patchOf },
    edit: { title: "an apply_patch", result: patchOf },
    expectDenied: (res) => expect(res.text).toContain("PreToolUse hook"),
    expectApplied: (res) => expect(res?.text).toContain("Success"),

    expectContext(context) {
      // The SessionStart context is a developer message of its own.
      expect(context).toBeDefined();
      expect(context!.kind === "text" && context!.role).toBe("developer");
    },
    expectClaimed(res, s) {
      const found = allResults(s.r1).find((x) => x.name === "tool_search");
      expect(found?.text).toContain("claim_paths");
      expect(res.text).toContain(`"granted":true`);
    },
    expectTurnEnded: (run1) => expect(run1.events.some((e) => e.type === "turn.completed")).toBe(true),

    compaction: {
      /** Carries no agent id, so one seen after it was injected afresh. */
      summary: "SUMMARY-OF-EARLIER-WORK: three files patched, one denied.",
      request: /compact|summar/i, // Codex's compaction request
    },
  },
  (s, live) => {
    live("setup records the hook trust itself: codex exec runs Airlock's hooks", () => {
      // Codex skips an untrusted hook without a word; a SessionStart record is the sign it ran.
      expect(s.r1.length).toBeGreaterThan(0);
      expect(s.r1[0]!.all).toContain(`codex:${s.sid}`);
    });

    live("hook text reaches the model as written (Codex HTML-escapes < and >)", () => {
      const stop = s.r1.find((r) => r.lastUserText.includes(STOP_FEEDBACK));
      const context = s.r1[0]?.items.find((it) => it.kind === "text" && it.text.includes(`codex:${s.sid}`));
      expect(stop).toBeDefined();
      expect(context).toBeDefined();
      for (const text of [stop!.lastUserText.replace(/<\/?hook_prompt[^>]*>/g, ""), context!.kind === "text" ? context!.text : ""]) {
        expect(text).not.toContain("&lt;");
        expect(text).not.toContain("&gt;");
      }
    });
  },
);
