// Contract tests for Claude Code's hooks: the documented stdin JSON in, the documented output
// out. Payloads are copied from the hooks reference, https://code.claude.com/docs/en/hooks
// ("Hook Input": PreToolUse / Stop / SessionStart input examples), with only the ids and paths
// the test needs changed where noted. The daemon is the real HTTP app through its fetch handler.
import { describe, expect, test } from "bun:test";
import { claudeCode } from "../../../src/clients/hooks/claude-code.ts";
import { type HookDeps, runHook } from "../../../src/clients/hooks/shared.ts";
import { makeApp, type TestApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

/** The fixtures' workspace: the room their claims live in. */
const ROOT = "/path";

// From "PreToolUse Input".
const PRE_TOOL_USE = {
  session_id: "abc123",
  transcript_path: "/Users/.../.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
  cwd: "/Users/...",
  hook_event_name: "PreToolUse",
  tool_name: "Write",
  tool_input: { file_path: "/path/to/file.txt", content: "file content" },
};
// From "Stop and SubagentStop Input" (stop_hook_active false: the first stop of a turn).
const STOP = {
  session_id: "abc123",
  transcript_path: "~/.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
  hook_event_name: "Stop",
  stop_hook_active: false,
};
// From "SessionStart Input".
const SESSION_START = {
  session_id: "abc123",
  transcript_path: "~/.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
  hook_event_name: "SessionStart",
  source: "startup",
};
const ME = "claude-code:abc123";

/** The real daemon logic (no port); "/path" is the repository root of /path/to/file.txt. */
const deps = (t: TestApp) => appDeps(t, "/path");
const DOWN: HookDeps = {
  tool: () => Promise.reject(new Error("no Airlock daemon answers at http://127.0.0.1:27183")),
  status: () => Promise.reject(new Error("no Airlock daemon answers at http://127.0.0.1:27183")),
  repoRoots: () => ["/path"],
};
const run = (event: "session-start" | "pre-edit" | "stop", input: unknown, deps: HookDeps) => runHook(claudeCode, event, JSON.stringify(input), deps);

describe("claude-code PreToolUse (pre-edit)", () => {
  test("a file inside another agent's claim is denied with permissionDecision deny, naming holder, claim and witness", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:other", paths: ["to/**"], reason: "refactor" });
    const out = await run("pre-edit", PRE_TOOL_USE, deps(t));
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body)).toEqual(["hookSpecificOutput"]);
    expect(body.hookSpecificOutput.hookEventName).toBe("PreToolUse");
    expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
    const reason: string = body.hookSpecificOutput.permissionDecisionReason;
    expect(reason).toContain("to/file.txt is inside codex:other's claim to/** for \"refactor\" (both match to/file.txt;");
    expect(reason).toContain("Re-scope");
    expect(reason).toContain("wait for codex:other to release it");
  });

  test("a file outside every claim is allowed silently (exit 0, no output)", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:other", paths: ["src/**"] });
    expect(await run("pre-edit", PRE_TOOL_USE, deps(t))).toEqual({ code: 0 });
  });

  test("the agent's own claim does not block it", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: ME, paths: ["to/**"] });
    expect(await run("pre-edit", PRE_TOOL_USE, deps(t))).toEqual({ code: 0 });
  });

  test("Edit, MultiEdit and NotebookEdit (notebook_path) are checked too; other tools are not", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:other", paths: ["to/**"] });
    for (const tool_name of ["Edit", "MultiEdit"]) {
      const out = await run("pre-edit", { ...PRE_TOOL_USE, tool_name, tool_input: { file_path: "/path/to/file.txt", old_string: "a", new_string: "b" } }, deps(t));
      expect(JSON.parse(out.stdout!).hookSpecificOutput.permissionDecision).toBe("deny");
    }
    const nb = await run("pre-edit", { ...PRE_TOOL_USE, tool_name: "NotebookEdit", tool_input: { notebook_path: "/path/to/n.ipynb", new_source: "x" } }, deps(t));
    expect(JSON.parse(nb.stdout!).hookSpecificOutput.permissionDecision).toBe("deny");
    expect(await run("pre-edit", { ...PRE_TOOL_USE, tool_name: "Read", tool_input: { file_path: "/path/to/file.txt" } }, deps(t))).toEqual({ code: 0 });
  });

  test("daemon down: allowed (no decision), told to the user in systemMessage, and one warning line on stderr", async () => {
    const out = await run("pre-edit", PRE_TOOL_USE, DOWN);
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body)).toEqual(["systemMessage"]);
    expect(body.systemMessage).toBe(
      "Airlock hook pre-edit could not check (no Airlock daemon answers at http://127.0.0.1:27183). The edit is allowed, NOT checked against other agents' claims. Run `airlock doctor` to find the cause.",
    );
    expect(out.stderr).toMatch(/^airlock hook claude-code pre-edit: no Airlock daemon answers .*; allowing\n$/);
  });
});

describe("claude-code: an edit tool with no target the adapter can read", () => {
  test("a Write whose file_path was renamed fails open visibly: allowed, told in systemMessage, one line on stderr", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:other", paths: ["**"] });
    for (const tool_input of [{ path: "/path/to/file.txt", content: "x" }, {}]) {
      const out = await run("pre-edit", { ...PRE_TOOL_USE, tool_input }, deps(t));
      expect(out.code).toBe(0);
      expect(JSON.parse(out.stdout!)).toEqual({
        systemMessage:
          "Airlock hook pre-edit could not check (edit tool without a target path). The edit is allowed, NOT checked against other agents' claims. Run `airlock doctor` to find the cause.",
      });
      expect(out.stderr).toBe("airlock hook claude-code pre-edit: edit tool without a target path; allowing\n");
    }
  });
});

describe("claude-code Stop", () => {
  test("a pending slot offer blocks stopping with decision block and a reason naming acquire_slot and the wake_token", async () => {
    const t = await makeApp();
    const held = await t.call("acquire_slot", { agent_id: "codex:other", reason: "cargo test" });
    const queued = await t.call("acquire_slot", { agent_id: ME, reason: "bun test" });
    expect(queued.granted).toBe(false);
    await t.call("release_slot", { slot_token: held.slot_token });
    const out = await run("stop", STOP, deps(t));
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body).sort()).toEqual(["decision", "reason"]);
    expect(body.decision).toBe("block");
    expect(body.reason).toContain("slot in pool `heavy` is offered to you");
    expect(body.reason).toContain(`acquire_slot(agent_id="${ME}", pool="heavy", wake_token=`);
    expect(body.reason).toContain("wake_token");
  });

  test("queued but not offered, or nothing at all: stopping is allowed", async () => {
    const t = await makeApp();
    expect(await run("stop", STOP, deps(t))).toEqual({ code: 0 });
    await t.call("acquire_slot", { agent_id: "codex:other" });
    await t.call("acquire_slot", { agent_id: ME });
    expect(await run("stop", STOP, deps(t))).toEqual({ code: 0 });
  });

  test("stop_hook_active (already continuing because of a stop hook) is allowed, so it never loops", async () => {
    const t = await makeApp();
    const held = await t.call("acquire_slot", { agent_id: "codex:other" });
    await t.call("acquire_slot", { agent_id: ME });
    await t.call("release_slot", { slot_token: held.slot_token });
    expect(await run("stop", { ...STOP, stop_hook_active: true }, deps(t))).toEqual({ code: 0 });
  });
});

describe("claude-code SessionStart", () => {
  test("injects the policy with the agent id and a summary of what others hold as additionalContext", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:other", paths: ["src/api/**"], reason: "api work" });
    await t.call("acquire_slot", { agent_id: "gemini-cli:g1", reason: "cargo build" });
    await t.call("lock_resource", { name: "npm-install", agent_id: "cursor:c1" });
    // The hooks reference lists cwd among every event's common fields (its example leaves it out).
    const out = await run("session-start", { ...SESSION_START, cwd: ROOT }, deps(t));
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(body.hookSpecificOutput.hookEventName).toBe("SessionStart");
    const ctx: string = body.hookSpecificOutput.additionalContext;
    expect(ctx).toContain("Your agent_id is `claude-code:abc123`");
    expect(ctx).toContain(`room="/path" (your working directory's checkout)`);
    expect(ctx).toContain("codex:other: src/api/** — api work");
    expect(ctx).toContain("heavy 1/1 — held by gemini-cli:g1 (cargo build)");
    expect(ctx).toContain("npm-install — cursor:c1");
  });

  test("daemon down: the policy and identity are still injected, with a warning", async () => {
    const out = await run("session-start", SESSION_START, DOWN);
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(body.hookSpecificOutput.additionalContext).toContain("`claude-code:abc123`");
    expect(body.systemMessage).toContain("Airlock: the daemon did not answer");
    expect(out.stderr).toContain("no status");
  });
});

describe("claude-code malformed input", () => {
  test("non-JSON, a JSON array, no session id, or no stdin at all: exit 0, told to the user, and a warning", async () => {
    for (const raw of ["not json", "[1]", JSON.stringify({ ...PRE_TOOL_USE, session_id: undefined }), undefined]) {
      const out = await runHook(claudeCode, "pre-edit", raw, DOWN);
      expect(out.code).toBe(0);
      expect(JSON.parse(out.stdout!).systemMessage).toContain("could not check (malformed input: ");
      expect(out.stderr).toMatch(/^airlock hook claude-code pre-edit: malformed input: .*; allowing\n$/);
    }
  });
});
