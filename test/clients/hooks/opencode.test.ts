// Contract tests for the opencode adapter: the wire between our OpenCode plugin
// (src/clients/opencode-plugin.ts) and `airlock hook opencode`. The inputs are what the plugin
// sends: the session id OpenCode gives tool.execute.before / session.idle / the system transform
// (`ses_…`), the plugin's directory, and for pre-edit the tool name and output.args as OpenCode
// 1.18.33 passes them (edit: filePath, oldString, newString; write: filePath, content;
// apply_patch: patchText), seen in the live test's requests.
import { describe, expect, test } from "bun:test";
import { opencode } from "../../../src/clients/hooks/opencode.ts";
import { type HookDeps, runHook } from "../../../src/clients/hooks/shared.ts";
import { makeApp, type TestApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

const ROOT = "/work/repo";
const BASE = { session_id: "ses_dcd46f321ffemKrAKs718W2Yw4", cwd: ROOT };
const ME = "opencode:ses_dcd46f321ffemKrAKs718W2Yw4";
const EDIT = { ...BASE, tool: "edit", args: { filePath: "/work/repo/src/api/users.ts", oldString: "a", newString: "b" } };
const deps = (t: TestApp) => appDeps(t, ROOT);
const body = (out: { stdout?: string }) => JSON.parse(out.stdout!);

describe("opencode pre-edit", () => {
  test("an edit into another agent's claim is denied with {decision:deny, reason} naming the holder and the witness", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/api/**"], reason: "api work" });
    const out = await runHook(opencode, "pre-edit", JSON.stringify(EDIT), deps(t));
    expect(out.code).toBe(0);
    expect(Object.keys(body(out)).sort()).toEqual(["decision", "reason"]);
    expect(body(out).decision).toBe("deny");
    expect(body(out).reason).toContain('src/api/users.ts is inside codex:x\'s claim src/api/** for "api work" (both match src/api/users.ts;');
  });

  test("write and apply_patch are checked; reads and own claims answer {}", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { room: ROOT, agent_id: "codex:x", paths: ["src/**"] });
    const write = { ...BASE, tool: "write", args: { filePath: "/work/repo/src/new.ts", content: "x" } };
    expect(body(await runHook(opencode, "pre-edit", JSON.stringify(write), deps(t))).decision).toBe("deny");
    const patch = { ...BASE, tool: "apply_patch", args: { patchText: "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch" } };
    expect(body(await runHook(opencode, "pre-edit", JSON.stringify(patch), deps(t))).decision).toBe("deny");
    const read = { ...BASE, tool: "read", args: { filePath: "/work/repo/src/a.ts" } };
    expect(await runHook(opencode, "pre-edit", JSON.stringify(read), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
    await t.call("claim_paths", { room: ROOT, agent_id: ME, paths: ["lib/**"] });
    const own = { ...EDIT, args: { filePath: "/work/repo/lib/x.ts", oldString: "a", newString: "b" } };
    expect(await runHook(opencode, "pre-edit", JSON.stringify(own), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
  });

  test("daemon down: allowed, with a warning the plugin logs", async () => {
    const down: HookDeps = { tool: () => Promise.reject(new Error("down")), status: () => Promise.reject(new Error("down")), repoRoots: () => [ROOT] };
    const out = await runHook(opencode, "pre-edit", JSON.stringify(EDIT), down);
    expect(out.code).toBe(0);
    expect(Object.keys(body(out))).toEqual(["warning"]);
    expect(body(out).warning).toContain("The edit is allowed, NOT checked");
  });
});

describe("opencode session-start and stop", () => {
  test("session-start answers {context} with the identity and the policy", async () => {
    const t = await makeApp();
    const out = await runHook(opencode, "session-start", JSON.stringify(BASE), deps(t));
    expect(Object.keys(body(out))).toEqual(["context"]);
    expect(body(out).context).toContain(ME);
    expect(body(out).context).toContain("claim_paths");
  });

  test("an offered slot answers {decision:block, reason}, every time it is asked (the plugin wakes once per offer)", async () => {
    const t = await makeApp();
    const held = await t.call("acquire_slot", { agent_id: "agent-h", pool: "heavy" });
    await t.call("acquire_slot", { agent_id: ME, pool: "heavy" });
    expect(await runHook(opencode, "stop", JSON.stringify(BASE), deps(t))).toEqual({ code: 0, stdout: "{}\n" });
    await t.call("release_slot", { slot_token: held.slot_token });
    for (let i = 0; i < 2; i++) {
      const out = await runHook(opencode, "stop", JSON.stringify(BASE), deps(t));
      expect(body(out).decision).toBe("block");
      expect(body(out).reason).toStartWith("Airlock: your turn has come — a slot in pool `heavy` is offered");
    }
  });
});
