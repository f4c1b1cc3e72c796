// The real Claude Code CLI (npm @anthropic-ai/claude-code, pinned) in headless sessions, with the
// model played by a scripted server on loopback, on a machine set up the way a user sets it up:
// a daemon on a port that is not the default one, `airlock setup claude-code` with nothing else in
// the environment, then `claude -p … --permission-mode acceptEdits` (the flag a headless user
// passes to let the agent edit) in a git repository Claude Code has never seen (no trust written).
// Everything asserted is what reached the model or the disk: the denial text inside the Write's
// tool_result, the SessionStart identity in the request, the file's bytes.
//
// The story and the shared tests are liveScenarios (test/helpers/live-scenarios.ts); here is what
// is Claude Code's own. Session 1 (one `claude -p`): Read three files; Write src/locked.ts (denied);
// Write lib/free.ts; Edit docs/readme.md; then the shared claim_paths, slot and Stop turns.
// Session 2 (`claude -p --resume`): the identity is injected again on resume; the model's first
// answer reports a full context, Claude Code compacts, and the identity is injected again after
// the compaction.
import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { liveScenarios } from "../helpers/live-scenarios.ts";
import { CLAUDE_BIN, type LiveWorld, runBounded } from "../helpers/live-session.ts";
import type { ToolResult } from "../helpers/model-server.ts";

/** Far past any Claude model's context window: Claude Code then compacts before its next request. */
const FULL_CONTEXT_TOKENS = 995_000;

const FLAGS = ["--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose"];

const claude = (w: LiveWorld, args: string[]) =>
  runBounded([CLAUDE_BIN, ...args, ...FLAGS], {
    cwd: w.repo,
    env: w.userEnv({
      ANTHROPIC_BASE_URL: w.model.url,
      ANTHROPIC_API_KEY: "sk-ant-live-test",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    }),
  });

/** The result of the `tool` call on `rel` (its file_path ends with it). */
const onFile = (tool: string) => (results: ToolResult[], rel: string) => results.find((x) => x.name === tool && String((x.input as any)?.file_path).endsWith(rel));

liveScenarios({
  id: "claude-code",
  name: "Claude Code",
  title: "Claude Code, headless, set up as a user sets it up",
  bin: CLAUDE_BIN,
  what: "Claude Code CLI",

  prepare(w) {
    // What a Claude Code user already has: onboarding done. Nothing else, and nothing of Airlock's.
    writeFileSync(join(w.home, ".claude.json"), `${JSON.stringify({ hasCompletedOnboarding: true }, null, 2)}\n`);
  },
  run: (w, prompt) => claude(w, ["-p", prompt]),
  resume: (w, sid, prompt) => claude(w, ["-p", prompt, "--resume", sid]),
  sessionId: (run) => run.events.find((e) => e.type === "system" && e.subtype === "init")?.session_id,

  /** Claude Code's wrapper around a Stop hook's reason, as the model receives it. */
  stopFeedback: "Stop hook feedback",
  airlockCall: (tool, input) => ({ name: `mcp__airlock__${tool}`, input }),
  airlockResult: (tool) => `mcp__airlock__${tool}`,
  granted: (text) => JSON.parse(text).granted,

  opening: (file) => [
    { tools: ["src/locked.ts", "lib/free.ts", "docs/readme.md"].map((f) => ({ name: "Read", input: { file_path: file(f) } })) },
    { tools: [{ name: "Write", input: { file_path: file("src/locked.ts"), content: "export const locked = 2;\n" } }] },
    { tools: [{ name: "Write", input: { file_path: file("lib/free.ts"), content: "export const free = 2;\n" } }] },
    { tools: [{ name: "Edit", input: { file_path: file("docs/readme.md"), old_string: "old line", new_string: "new line" } }] },
  ],
  lookAgain: (file) => ({ tools: [{ name: "Read", input: { file_path: file("docs/readme.md") } }], inputTokens: FULL_CONTEXT_TOKENS }),

  write: { title: "a Write", result: onFile("Write") },
  edit: { title: "an Edit", result: onFile("Edit") },
  expectDenied: (res) => expect(res.isError).toBe(true),
  expectApplied: (res) => expect(res?.isError).toBe(false),

  expectClaimed(res, s) {
    expect(res.text).not.toContain("haven't granted");
    expect(res.isError).toBe(false);
    expect(s.run1.events.filter((e) => e.type === "system" && e.subtype === "permission_denied")).toEqual([]);
  },
  expectTurnEnded(run1) {
    const result = run1.events.find((e) => e.type === "result");
    expect(result?.subtype).toBe("success");
  },

  compaction: {
    /** Carries no agent id, so one seen after it was injected afresh. */
    summary: "SUMMARY-OF-EARLIER-WORK: three files read and edited, one denied.",
    request: /summar/i, // Claude Code's compaction request
    expectCompacted: (run2) => expect(run2?.events.some((e) => e.type === "system" && e.subtype === "compact_boundary")).toBe(true),
  },
});
