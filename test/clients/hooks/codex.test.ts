// Contract tests for Codex's hooks. Input payloads follow the generated wire schemas
// (https://github.com/openai/codex/tree/main/codex-rs/hooks/schema/generated:
// pre-tool-use.command.input, stop.command.input; required fields session_id, transcript_path,
// cwd, hook_event_name, model, permission_mode, tool_name, tool_input, tool_use_id) and
// https://developers.openai.com/codex/hooks; apply_patch sends the raw patch as
// tool_input.command (openai/codex#18391). Outputs are checked against the output schemas.
import { describe, expect, test } from "bun:test";
import { codex, patchTargets } from "../../../src/clients/hooks/codex.ts";
import { type HookDeps, runHook } from "../../../src/clients/hooks/shared.ts";
import { makeApp, type TestApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

/** The fixtures' workspace: the room their claims live in. */
const ROOT = "/work/repo";

const PATCH = [
  "*** Begin Patch",
  "*** Update File: src/api/users.ts",
  "@@",
  "-old",
  "+new",
  "*** Add File: docs/new.md",
  "+hello",
  "*** End Patch",
].join("\n");
const PRE_TOOL_USE = {
  session_id: "019a-sess",
  transcript_path: "/home/me/.codex/sessions/rollout.jsonl",
  cwd: "/work/repo",
  hook_event_name: "PreToolUse",
  model: "gpt-5-codex",
  permission_mode: "default",
  tool_name: "apply_patch",
  tool_input: { command: PATCH },
  tool_use_id: "call_1",
};
const STOP = {
  session_id: "019a-sess",
  transcript_path: "/home/me/.codex/sessions/rollout.jsonl",
  cwd: "/work/repo",
  hook_event_name: "Stop",
  model: "gpt-5-codex",
  permission_mode: "default",
  stop_hook_active: false,
  last_assistant_message: "Done.",
};
const SESSION_START = { session_id: "019a-sess", transcript_path: null, cwd: "/work/repo", hook_event_name: "SessionStart", model: "gpt-5-codex", permission_mode: "default", source: "startup" };
const ME = "codex:019a-sess";

const deps = (t: TestApp) => appDeps(t, "/work/repo");

describe("codex PreToolUse on apply_patch (pre-edit)", () => {
  test("reads every file a patch writes from its headers", () => {
    expect(patchTargets(PATCH)).toEqual(["src/api/users.ts", "docs/new.md"]);
    expect(patchTargets("*** Begin Patch\n  *** Delete File: a.ts\n*** Update File: b.ts\n*** Move to: c.ts\n*** End Patch")).toEqual(["a.ts", "b.ts", "c.ts"]);
  });

  test("a patch touching another agent's claim is denied through hookSpecificOutput.permissionDecision", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "claude-code:x", paths: ["src/api/**"] });
    const out = await runHook(codex, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t));
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(body).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: expect.any(String) },
    });
    expect(body.hookSpecificOutput.permissionDecisionReason).toContain("src/api/users.ts is inside claude-code:x's claim src/api/** (both match src/api/users.ts;");
  });

  test("a patch outside every claim, or under the agent's own claim, is allowed silently", async () => {
    const t = await makeApp();
    expect(await runHook(codex, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t))).toEqual({ code: 0 });
    await t.call("claim_paths", { room: ROOT, agent_id: ME, paths: ["src/**", "docs/**"] });
    expect(await runHook(codex, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t))).toEqual({ code: 0 });
  });

  test("Bash calls are not edits: allowed without asking the daemon", async () => {
    const never: HookDeps = { tool: () => Promise.reject(new Error("asked")), status: () => Promise.reject(new Error("asked")) };
    const bash = { ...PRE_TOOL_USE, tool_name: "Bash", tool_input: { command: "cargo test" } };
    expect(await runHook(codex, "pre-edit", JSON.stringify(bash), never)).toEqual({ code: 0 });
  });
});

describe("codex Stop and SessionStart", () => {
  test("an offered slot blocks with {decision:block, reason} (a non-blank reason, as the schema requires)", async () => {
    const t = await makeApp();
    const held = await t.call("acquire_slot", { agent_id: "other" });
    await t.call("acquire_slot", { agent_id: ME });
    await t.call("release_slot", { slot_token: held.slot_token });
    const out = await runHook(codex, "stop", JSON.stringify(STOP), deps(t));
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body).sort()).toEqual(["decision", "reason"]);
    expect(body.decision).toBe("block");
    expect(body.reason).toMatch(/\S/);
    expect(body.reason).toContain(`acquire_slot(agent_id="${ME}", pool="heavy"`);
  });

  test("nothing offered: the stop is allowed", async () => {
    expect(await runHook(codex, "stop", JSON.stringify(STOP), deps(await makeApp()))).toEqual({ code: 0 });
  });

  test("session start gives hookSpecificOutput.additionalContext with the codex agent id", async () => {
    const out = await runHook(codex, "session-start", JSON.stringify(SESSION_START), deps(await makeApp()));
    const body = JSON.parse(out.stdout!);
    expect(body.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(body.hookSpecificOutput.additionalContext).toContain("Your agent_id is `codex:019a-sess`");
    expect(body.hookSpecificOutput.additionalContext).toContain("Nobody else holds anything right now.");
  });
});

describe("codex: an edit tool with no target the adapter can read", () => {
  test("an apply_patch without file headers, or an Edit with no patch, fails open visibly in systemMessage", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "claude-code:x", paths: ["**"] });
    for (const tool_input of [{ command: "*** Begin Patch\n@@\n-old\n+new\n*** End Patch" }, { file_path: "/work/repo/src/a.ts" }]) {
      const out = await runHook(codex, "pre-edit", JSON.stringify({ ...PRE_TOOL_USE, tool_input }), deps(t));
      expect(out.code).toBe(0);
      expect(JSON.parse(out.stdout!)).toEqual({ systemMessage: expect.stringContaining("could not check (edit tool without a target path)") });
      expect(out.stderr).toBe("airlock hook codex pre-edit: edit tool without a target path; allowing\n");
    }
  });
});

describe("codex pre-edit and another agent's uncommitted edit", () => {
  test("no documented way to add context to an allowed edit: allowed, and the user is told in systemMessage; strict denies", async () => {
    const t = await makeApp();
    await t.call("report_worktree", { room: ROOT, agent_id: "claude-code:y", branch: "feat-y", dirty: ["src/api/users.ts"], touched: ["src/api/users.ts"] });
    const out = await runHook(codex, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t));
    const body = JSON.parse(out.stdout!);
    expect(body.hookSpecificOutput).toBeUndefined();
    expect(body.systemMessage).toContain("- src/api/users.ts: uncommitted edit by claude-code:y on branch feat-y");
    const old = process.env.AIRLOCK_EDIT_POLICY;
    process.env.AIRLOCK_EDIT_POLICY = "strict";
    try {
      const denied = JSON.parse((await runHook(codex, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t))).stdout!);
      expect(denied.hookSpecificOutput.permissionDecision).toBe("deny");
      expect(denied.hookSpecificOutput.permissionDecisionReason).toContain("claude-code:y on branch feat-y");
    } finally {
      if (old === undefined) delete process.env.AIRLOCK_EDIT_POLICY;
      else process.env.AIRLOCK_EDIT_POLICY = old;
    }
  });
});
