// Contract tests for Cursor's hooks (https://cursor.com/docs/hooks). Payloads use the documented
// common fields (conversation_id, generation_id, hook_event_name, workspace_roots, model,
// cursor_version) plus preToolUse's tool_name/tool_input (Write: {file_path, content}) and
// stop's status/loop_count.
import { describe, expect, test } from "bun:test";
import { cursor } from "../../../src/clients/hooks/cursor.ts";
import { runHook } from "../../../src/clients/hooks/shared.ts";
import { makeApp, type TestApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

/** The fixtures' workspace: the room their claims live in. */
const ROOT = "/path/to/project";

const COMMON = { conversation_id: "conv-123", generation_id: "gen-456", workspace_roots: ["/path/to/project"], model: "gpt-4", cursor_version: "2.0.77" };
const PRE_TOOL_USE = { ...COMMON, hook_event_name: "preToolUse", tool_name: "Write", tool_input: { file_path: "/path/to/project/src/main.ts", content: "x" } };
const STOP = { ...COMMON, hook_event_name: "stop", status: "completed", loop_count: 0 };
const SESSION_START = { ...COMMON, session_id: "conv-123", hook_event_name: "sessionStart" };
const ME = "cursor:conv-123";

const deps = (t: TestApp) => appDeps(t, "/path/to/project");

describe("cursor preToolUse (pre-edit)", () => {
  test("a Write into another agent's claim is denied: permission deny with agent_message, and exit 2", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/**"] });
    const out = await runHook(cursor, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t));
    expect(out.code).toBe(2);
    const body = JSON.parse(out.stdout!);
    expect(body.permission).toBe("deny");
    expect(body.user_message).toBe("Airlock: this edit touches a region another agent has claimed.");
    expect(body.agent_message).toContain("src/main.ts is inside codex:x's claim src/** (both match src/main.ts;");
  });

  test("outside every claim or under its own claim: {} and exit 0", async () => {
    const t = await makeApp();
    expect(await runHook(cursor, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
    await t.call("claim_paths", { room: ROOT, agent_id: ME, paths: ["src/**"] });
    expect(await runHook(cursor, "pre-edit", JSON.stringify(PRE_TOOL_USE), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
    const shell = { ...PRE_TOOL_USE, tool_name: "Shell", tool_input: { command: "ls" } };
    expect(await runHook(cursor, "pre-edit", JSON.stringify(shell), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
  });
});

describe("cursor stop and sessionStart", () => {
  test("an offered slot sends one followup_message; a stop after a follow-up (loop_count > 0) is allowed", async () => {
    const t = await makeApp();
    const held = await t.call("acquire_slot", { agent_id: "other" });
    await t.call("acquire_slot", { agent_id: ME });
    await t.call("release_slot", { slot_token: held.slot_token });
    const out = await runHook(cursor, "stop", JSON.stringify(STOP), deps(t));
    expect(out.code).toBe(0);
    const body = JSON.parse(out.stdout!);
    expect(Object.keys(body)).toEqual(["followup_message"]);
    expect(body.followup_message).toContain(`acquire_slot(agent_id="${ME}", pool="heavy"`);
    expect(await runHook(cursor, "stop", JSON.stringify({ ...STOP, loop_count: 1 }), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
  });

  test("sessionStart answers additional_context with the cursor agent id", async () => {
    const body = JSON.parse((await runHook(cursor, "session-start", JSON.stringify(SESSION_START), deps(await makeApp()))).stdout!);
    expect(Object.keys(body)).toEqual(["additional_context"]);
    expect(body.additional_context).toContain("Your agent_id is `cursor:conv-123`");
  });
});

describe("cursor fail-open", () => {
  test("daemon down: allowed with {} (no permission field, so Cursor's own approval stays), the warning on stderr", async () => {
    const down = { tool: () => Promise.reject(new Error("down")), status: () => Promise.reject(new Error("down")), repoRoots: () => ["/path/to/project"] };
    const out = await runHook(cursor, "pre-edit", JSON.stringify(PRE_TOOL_USE), down);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("{}\n");
    expect(out.stderr).toContain("The edit is allowed, NOT checked against other agents' claims");
    expect(out.stderr).toEndWith("airlock hook cursor pre-edit: down; allowing\n");
  });
});

describe("cursor: an edit tool with no target the adapter can read", () => {
  test("a Write without file_path or path (a renamed field) fails open visibly: {} and the warning on stderr", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["**"] });
    const renamed = { ...PRE_TOOL_USE, tool_input: { target_file: "/path/to/project/src/main.ts", content: "x" } };
    const out = await runHook(cursor, "pre-edit", JSON.stringify(renamed), deps(t));
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("{}\n");
    expect(out.stderr).toContain("Airlock hook pre-edit could not check (edit tool without a target path). The edit is allowed, NOT checked");
    expect(out.stderr).toEndWith("airlock hook cursor pre-edit: edit tool without a target path; allowing\n");
  });
});
