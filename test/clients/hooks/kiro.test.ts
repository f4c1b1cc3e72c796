// Contract tests for Kiro CLI's agent hooks (https://kiro.dev/docs/cli/hooks): input
// {hook_event_name, cwd} plus tool_name/tool_input for tool hooks; output by exit code: 0 with
// STDOUT (added to the context at agentSpawn and userPromptSubmit), 2 on preToolUse = blocked with
// STDERR returned to the model, any other code = a warning shown to the user and the agent goes on.
import { describe, expect, test } from "bun:test";
import { kiro } from "../../../src/clients/hooks/kiro.ts";
import { agentIdOf, type HookDeps, runHook } from "../../../src/clients/hooks/shared.ts";
import { makeApp, type TestApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

const ROOT = "/work/repo";
const pre = (tool_name: string, tool_input: Record<string, unknown>) => JSON.stringify({ hook_event_name: "preToolUse", cwd: ROOT, tool_name, tool_input });
const deps = (t: TestApp) => appDeps(t, ROOT);

describe("kiro preToolUse (pre-edit)", () => {
  test("fs_write into another agent's claim: exit 2, the conflict on STDERR, nothing on STDOUT", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/**"] });
    const out = await runHook(kiro, "pre-edit", pre("fs_write", { command: "create", path: "/work/repo/src/a.ts", file_text: "x" }), deps(t));
    expect(out.code).toBe(2);
    expect(out.stdout).toBeUndefined();
    expect(out.stderr).toContain("src/a.ts is inside codex:x's claim src/**");
    expect((await runHook(kiro, "pre-edit", pre("write", { path: "src/b.ts", content: "x" }), deps(t))).code).toBe(2);
  });

  test("fs_read, execute_bash and a free file: exit 0, no output", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/**"] });
    expect(await runHook(kiro, "pre-edit", pre("fs_read", { operations: [{ mode: "Line", path: "src/a.ts" }] }), deps(t))).toEqual({ code: 0 });
    expect(await runHook(kiro, "pre-edit", pre("execute_bash", { command: "ls" }), deps(t))).toEqual({ code: 0 });
    expect(await runHook(kiro, "pre-edit", pre("fs_write", { command: "create", path: "docs/x.md", file_text: "" }), deps(t))).toEqual({ code: 0 });
  });

  test("daemon down: exit 1 (a failed hook: Kiro shows STDERR as a warning and runs the tool)", async () => {
    const down: HookDeps = { tool: () => Promise.reject(new Error("down")), status: () => Promise.reject(new Error("down")), repoRoots: () => [ROOT] };
    const out = await runHook(kiro, "pre-edit", pre("fs_write", { command: "create", path: "src/a.ts", file_text: "" }), down);
    expect(out.code).toBe(1);
    expect(out.stdout).toBeUndefined();
    expect(out.stderr).toContain("The edit is allowed, NOT checked");
  });
});

describe("kiro agentSpawn and userPromptSubmit", () => {
  test("no session id in the documented JSON: the session is named after its directory, the same for every hook", () => {
    const a = agentIdOf(kiro, { hook_event_name: "agentSpawn", cwd: ROOT });
    expect(a).toMatch(/^kiro:dir-[0-9a-f]{12}$/);
    expect(agentIdOf(kiro, { hook_event_name: "preToolUse", cwd: ROOT, tool_name: "fs_write" })).toBe(a!);
    expect(agentIdOf(kiro, { hook_event_name: "agentSpawn", cwd: "/elsewhere" })).not.toBe(a!);
    expect(agentIdOf(kiro, { hook_event_name: "agentSpawn", cwd: ROOT, session_id: "s-1" })).toBe("kiro:s-1");
  });

  test("agentSpawn: exit 0 with the identity and the policy as plain STDOUT", async () => {
    const out = await runHook(kiro, "session-start", JSON.stringify({ hook_event_name: "agentSpawn", cwd: ROOT }), deps(await makeApp()));
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`Your agent_id is \`${agentIdOf(kiro, { cwd: ROOT })}\``);
    expect(() => JSON.parse(out.stdout!)).toThrow();
  });

  test("agentSpawn with the daemon down: the policy still on STDOUT (exit 0), the warning on STDERR", async () => {
    const down: HookDeps = { tool: () => Promise.reject(new Error("down")), status: () => Promise.reject(new Error("down")) };
    const out = await runHook(kiro, "session-start", JSON.stringify({ hook_event_name: "agentSpawn", cwd: ROOT }), down);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Your agent_id is");
    expect(out.stderr).toContain("the daemon did not answer");
  });

  test("a message comes with the user's prompt, once", async () => {
    const t = await makeApp();
    const me = agentIdOf(kiro, { cwd: ROOT })!;
    await t.call("register_agent", { agent_id: me });
    await t.call("send_message", { from: "agent-a", to: [me], body: "before your turn" });
    const input = JSON.stringify({ hook_event_name: "userPromptSubmit", cwd: ROOT, prompt: "go on" });
    const out = await runHook(kiro, "prompt", input, deps(t));
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("before your turn");
    expect(await runHook(kiro, "prompt", input, deps(t))).toEqual({ code: 0 });
  });
});
