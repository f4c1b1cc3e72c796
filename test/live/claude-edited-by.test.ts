// The real Claude Code CLI (pinned) in a headless session, the model played by a scripted server,
// set up as a user sets it up (test/live/claude-code.test.ts tells the main story): another
// agent has reported an uncommitted edit of lib/free.ts (report_worktree); the model edits that
// file; the pre-edit hook lets the edit go and its note (PreToolUse additionalContext) reaches
// the model, naming the agent and its branch; the session's own report then lists the file as
// touched (docs/worktrees.md).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_BIN, LIVE_FILE_TIMEOUT_MS, liveTest, type LiveWorld, runBounded, type RunResult, startWorld } from "../helpers/live-session.ts";
import { transcript } from "../helpers/model-server.ts";

const live = liveTest(CLAUDE_BIN, "Claude Code CLI");
const PROMPT = "LIVE-EDITED-BY: bump lib/free.ts.";
const NOTE = "uncommitted edit by codex:peer on branch feat-peer";

describe("Claude Code: another agent's uncommitted edit of a file reaches the model at the edit", () => {
  let w: LiveWorld;
  let run: RunResult;
  beforeAll(async () => {
    w = await startWorld();
    writeFileSync(join(w.home, ".claude.json"), `${JSON.stringify({ hasCompletedOnboarding: true }, null, 2)}\n`);
    const setup = await w.airlock(["setup", "claude-code"], w.repo);
    if (setup.code !== 0) throw new Error(`setup failed: ${setup.stderr}`);
    await w.daemon.call("report_worktree", { agent_id: "codex:peer", room: w.repo, branch: "feat-peer", dirty: ["lib/free.ts"], touched: ["lib/free.ts"] });
    w.model.script((r) => {
      if (!r.lastUserText.includes(PROMPT)) return { text: "ok" };
      if (r.turnsSinceUser === 0) return { tools: [{ name: "Read", input: { file_path: join(w.repo, "lib/free.ts") } }] };
      if (r.turnsSinceUser === 1) return { tools: [{ name: "Edit", input: { file_path: join(w.repo, "lib/free.ts"), old_string: "free = 1", new_string: "free = 2" } }] };
      return { text: "Done." };
    });
    run = await runBounded([CLAUDE_BIN, "-p", PROMPT, "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose"], {
      cwd: w.repo,
      env: w.userEnv({ ANTHROPIC_BASE_URL: w.model.url, ANTHROPIC_API_KEY: "sk-ant-live-test", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" }),
    });
  }, LIVE_FILE_TIMEOUT_MS);
  afterAll(async () => {
    await w?.close();
  });

  live("the edit goes through, and the model's next request carries the note naming the agent and its branch", async () => {
    expect(w.model.errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(w.read("lib/free.ts")).toBe("export const free = 2;\n");
    const after = w.model.requests.filter((r) => r.lastUserText.includes(PROMPT) && r.turnsSinceUser >= 2);
    expect(after.length).toBeGreaterThan(0);
    const seen = after[0]!.all;
    if (!seen.includes(NOTE)) console.log(transcript(w.model.requests));
    expect(seen).toContain(NOTE);
    expect(seen).toContain("your edit goes ahead");
    // The session reported its own edit of the file.
    const mine = (await w.daemon.call("list_worktrees", { room: w.repo })).find((t: any) => t.agent_id.startsWith("claude-code:"));
    expect(mine?.touched).toEqual(["lib/free.ts"]);
  });
});
