// Contract tests for GitHub Copilot CLI's command hooks. Payloads as the CLI hooks reference
// documents them (https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference:
// timestamp, cwd, toolName, toolArgs as a JSON string) and as @github/copilot 1.0.102 sends them
// (sessionStart seen: {"sessionId", "timestamp", "cwd", "source": "new", "initialPrompt"};
// userPromptSubmitted: {"sessionId", "timestamp", "cwd", "prompt"}; postToolUse: {"sessionId",
// "timestamp", "cwd", "toolName", "toolArgs" as an OBJECT, "toolResult"}); answers: preToolUse
// {permissionDecision: "deny", permissionDecisionReason}, additionalContext, agentStop
// {decision: "block", reason} with stop_hook_active as the loop guard.
import { describe, expect, test } from "bun:test";
import { copilotCli } from "../../../src/clients/hooks/copilot-cli.ts";
import { type HookDeps, runHook } from "../../../src/clients/hooks/shared.ts";
import { makeApp, type TestApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

const ROOT = "/work/repo";
const BASE = { sessionId: "306ef7b9-cdab-44cb-a278-6cdad3d3dfa7", timestamp: 1796147314080, cwd: ROOT };
const ME = `copilot-cli:${BASE.sessionId}`;
const edit = (toolName: string, args: unknown) => JSON.stringify({ ...BASE, toolName, toolArgs: typeof args === "string" ? args : JSON.stringify(args) });
const deps = (t: TestApp) => appDeps(t, ROOT);

describe("copilot-cli preToolUse (pre-edit)", () => {
  test("edit into another agent's claim is denied with exactly {permissionDecision, permissionDecisionReason}", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/api/**"] });
    const out = await runHook(copilotCli, "pre-edit", edit("edit", { path: "/work/repo/src/api/users.ts", old_str: "a", new_str: "b" }), deps(t));
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body)).toEqual(["permissionDecision", "permissionDecisionReason"]);
    expect(body.permissionDecision).toBe("deny");
    expect(body.permissionDecisionReason).toContain("src/api/users.ts is inside codex:x's claim src/api/**");
  });

  test("create, str_replace_editor and apply_patch are checked; view, bash and a free file are allowed with no output", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/**"] });
    const denied = (s: string) => JSON.parse(s).permissionDecision === "deny";
    expect(denied((await runHook(copilotCli, "pre-edit", edit("create", { path: "/work/repo/src/new.ts", file_text: "x" }), deps(t))).stdout!)).toBe(true);
    expect(denied((await runHook(copilotCli, "pre-edit", edit("str_replace_editor", { command: "insert", path: "src/a.ts", insert_line: 1, new_str: "x" }), deps(t))).stdout!)).toBe(true);
    const patch = "*** Begin Patch\n*** Update File: src/b.ts\n@@\n-a\n+b\n*** End Patch\n";
    expect(denied((await runHook(copilotCli, "pre-edit", edit("apply_patch", patch), deps(t))).stdout!)).toBe(true);
    expect(await runHook(copilotCli, "pre-edit", edit("str_replace_editor", { command: "view", path: "src/a.ts" }), deps(t))).toEqual({ code: 0 });
    expect(await runHook(copilotCli, "pre-edit", edit("view", { path: "/work/repo/src/a.ts" }), deps(t))).toEqual({ code: 0 });
    expect(await runHook(copilotCli, "pre-edit", edit("bash", { command: "rm -rf src" }), deps(t))).toEqual({ code: 0 });
    expect(await runHook(copilotCli, "pre-edit", edit("edit", { path: "/work/repo/docs/x.md", old_str: "a", new_str: "b" }), deps(t))).toEqual({ code: 0 });
  });

  test("toolArgs as an object (what 1.0.102 sends to command hooks) is read the same way", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/**"] });
    const input = JSON.stringify({ ...BASE, toolName: "edit", toolArgs: { path: "/work/repo/src/a.ts", old_str: "a", new_str: "b" } });
    expect(JSON.parse((await runHook(copilotCli, "pre-edit", input, deps(t))).stdout!).permissionDecision).toBe("deny");
  });

  test("daemon down: allowed (exit 0, no decision), the warning on stderr", async () => {
    const down: HookDeps = { tool: () => Promise.reject(new Error("down")), status: () => Promise.reject(new Error("down")), repoRoots: () => [ROOT] };
    const out = await runHook(copilotCli, "pre-edit", edit("edit", { path: "/work/repo/a.ts", old_str: "a", new_str: "b" }), down);
    expect(out.code).toBe(0);
    expect(out.stdout).toBeUndefined();
    expect(out.stderr).toContain("could not check (down). The edit is allowed, NOT checked");
    expect(out.stderr).toContain("airlock hook copilot-cli pre-edit: down; allowing\n");
  });

  test("malformed stdin fails open the same way", async () => {
    const out = await runHook(copilotCli, "pre-edit", "not json", deps(await makeApp()));
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("malformed input: stdin is not JSON");
  });
});

describe("copilot-cli sessionStart, userPromptSubmitted, agentStop", () => {
  test("sessionStart answers {additionalContext} with the copilot-cli agent id", async () => {
    const input = { ...BASE, source: "new", initialPrompt: "hi" };
    const body = JSON.parse((await runHook(copilotCli, "session-start", JSON.stringify(input), deps(await makeApp()))).stdout!);
    expect(Object.keys(body)).toEqual(["additionalContext"]);
    expect(body.additionalContext).toContain(`Your agent_id is \`${ME}\``);
  });

  test("a message comes with the prompt in additionalContext", async () => {
    const t = await makeApp();
    await t.call("register_agent", { agent_id: ME });
    await t.call("send_message", { from: "agent-a", to: [ME], body: "before your turn" });
    const body = JSON.parse((await runHook(copilotCli, "prompt", JSON.stringify({ ...BASE, prompt: "go on" }), deps(t))).stdout!);
    expect(body.additionalContext).toContain("before your turn");
  });

  test("an offered slot holds the stop with {decision: block, reason}; stop_hook_active lets it go", async () => {
    const t = await makeApp();
    const held = await t.call("acquire_slot", { agent_id: "other" });
    await t.call("acquire_slot", { agent_id: ME });
    await t.call("release_slot", { slot_token: held.slot_token });
    const stop = { ...BASE, stopReason: "end_turn", stop_hook_active: false };
    const body = JSON.parse((await runHook(copilotCli, "stop", JSON.stringify(stop), deps(t))).stdout!);
    expect(body.decision).toBe("block");
    expect(body.reason).toContain(`acquire_slot(agent_id="${ME}", pool="heavy"`);
    expect(await runHook(copilotCli, "stop", JSON.stringify({ ...stop, stop_hook_active: true }), deps(t))).toEqual({ code: 0 });
  });
});
