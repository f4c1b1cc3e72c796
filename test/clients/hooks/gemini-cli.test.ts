// Contract tests for Gemini CLI's hooks. Payloads follow the hooks reference,
// https://geminicli.com/docs/hooks/reference ("Base input schema": session_id, transcript_path,
// cwd, hook_event_name, timestamp; BeforeTool: tool_name, tool_input; AfterAgent: prompt,
// prompt_response, stop_hook_active; SessionStart: source), and the writing-hooks guide
// (https://geminicli.com/docs/hooks/writing-hooks: matcher `write_file|replace`,
// tool_input.file_path / content).
import { describe, expect, test } from "bun:test";
import { geminiCli } from "../../../src/clients/hooks/gemini-cli.ts";
import { type HookDeps, runHook } from "../../../src/clients/hooks/shared.ts";
import { makeApp, type TestApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

/** The fixtures' workspace: the room their claims live in. */
const ROOT = "/work/repo";

const BASE = { session_id: "g-42", transcript_path: "/home/me/.gemini/tmp/chat.json", cwd: "/work/repo", timestamp: "2026-11-30T12:00:00.000Z" };
const BEFORE_TOOL = { ...BASE, hook_event_name: "BeforeTool", tool_name: "write_file", tool_input: { file_path: "/work/repo/src/api/users.ts", content: "x" } };
const AFTER_AGENT = { ...BASE, hook_event_name: "AfterAgent", prompt: "fix it", prompt_response: "Done.", stop_hook_active: false };
const SESSION_START = { ...BASE, hook_event_name: "SessionStart", source: "startup" };
const ME = "gemini-cli:g-42";

const deps = (t: TestApp) => appDeps(t, "/work/repo");

describe("gemini-cli BeforeTool (pre-edit)", () => {
  test("write_file into another agent's claim is denied with {decision:deny, reason}", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/api/**"] });
    const out = await runHook(geminiCli, "pre-edit", JSON.stringify(BEFORE_TOOL), deps(t));
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body).sort()).toEqual(["decision", "reason"]);
    expect(body.decision).toBe("deny");
    expect(body.reason).toContain("src/api/users.ts is inside codex:x's claim src/api/** (both match src/api/users.ts;");
  });

  test("replace is checked as well; allowed calls answer {} (stdout is parsed as JSON)", async () => {
    const t = await makeApp();
    const replace = { ...BEFORE_TOOL, tool_name: "replace", tool_input: { file_path: "/work/repo/src/a.ts", old_string: "a", new_string: "b" } };
    expect(await runHook(geminiCli, "pre-edit", JSON.stringify(replace), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/*.ts"] });
    expect(JSON.parse((await runHook(geminiCli, "pre-edit", JSON.stringify(replace), deps(t))).stdout!).decision).toBe("deny");
    await t.call("claim_paths", { room: ROOT, agent_id: ME, paths: ["lib/**"] });
    const own = { ...BEFORE_TOOL, tool_input: { file_path: "/work/repo/lib/x.ts", content: "" } };
    expect(await runHook(geminiCli, "pre-edit", JSON.stringify(own), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
  });

  test("daemon down: allowed, with a systemMessage the user sees and a warning on stderr, exit 0", async () => {
    const down: HookDeps = { tool: () => Promise.reject(new Error("down")), status: () => Promise.reject(new Error("down")), repoRoots: () => ["/work/repo"] };
    const out = await runHook(geminiCli, "pre-edit", JSON.stringify(BEFORE_TOOL), down);
    expect(out.code).toBe(0);
    expect(out.stderr).toBe("airlock hook gemini-cli pre-edit: down; allowing\n");
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body)).toEqual(["systemMessage"]);
    expect(body.systemMessage).toContain("could not check (down). The edit is allowed, NOT checked");
  });
});

describe("gemini-cli AfterAgent (stop) and SessionStart", () => {
  test("an offered slot rejects the response with {decision:deny, reason}: the reason becomes the agent's next prompt", async () => {
    const t = await makeApp();
    const held = await t.call("acquire_slot", { agent_id: "other" });
    await t.call("acquire_slot", { agent_id: ME });
    await t.call("release_slot", { slot_token: held.slot_token });
    const body = JSON.parse((await runHook(geminiCli, "stop", JSON.stringify(AFTER_AGENT), deps(t))).stdout!);
    expect(body.decision).toBe("deny");
    expect(body.reason).toContain(`acquire_slot(agent_id="${ME}", pool="heavy"`);
    expect(await runHook(geminiCli, "stop", JSON.stringify({ ...AFTER_AGENT, stop_hook_active: true }), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
  });

  test("session start: hookSpecificOutput.additionalContext with the gemini-cli agent id", async () => {
    const body = JSON.parse((await runHook(geminiCli, "session-start", JSON.stringify(SESSION_START), deps(await makeApp()))).stdout!);
    expect(body.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(body.hookSpecificOutput.additionalContext).toContain("Your agent_id is `gemini-cli:g-42`");
  });
});

describe("gemini-cli: an edit tool with no target the adapter can read", () => {
  test("write_file without file_path (a renamed field) fails open visibly, in systemMessage and on stderr", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: "/work/repo", agent_id: "codex:x", paths: ["**"] });
    const renamed = { ...BEFORE_TOOL, tool_input: { path: "/work/repo/src/main.ts", content: "x" } };
    const out = await runHook(geminiCli, "pre-edit", JSON.stringify(renamed), deps(t));
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout!)).toEqual({ systemMessage: expect.stringContaining("could not check (edit tool without a target path). The edit is allowed, NOT checked") });
    expect(out.stderr).toBe("airlock hook gemini-cli pre-edit: edit tool without a target path; allowing\n");
  });
});
