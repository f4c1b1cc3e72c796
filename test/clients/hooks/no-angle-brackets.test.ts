// Codex HTML-escapes hook text (`<the wake_token…>` reaches the model as `&lt;…&gt;`), so no
// string a hook emits, and no line of the policy, may hold `<` or `>`. This drives every hook
// event of every adapter through its answers (context, denial, blocked stop, fail-open) against
// the real app and scans the output.
import { describe, expect, test } from "bun:test";
import { codex } from "../../../src/clients/hooks/codex.ts";
import { HOOK_ADAPTERS } from "../../../src/clients/hooks/index.ts";
import { conflictMessage, failOpenMessage, HOOK_EVENTS, offerReason, othersSummary, runHook, type HookDeps } from "../../../src/clients/hooks/shared.ts";
import { policyText } from "../../../src/clients/policy.ts";
import type { Snapshot } from "../../../src/domain/snapshot.ts";
import { makeApp } from "../../mcp/rpc.ts";
import { appDeps } from "./support.ts";

const ANGLE = /[<>]/;

function inputFor(client: string, event: string): Record<string, unknown> {
  const base = { session_id: "s1", conversation_id: "s1", cwd: "/repo", workspace_roots: ["/repo"], transcript_path: null, stop_hook_active: false, loop_count: 0 };
  if (event !== "pre-edit") return { ...base, hook_event_name: event, source: "compact" };
  const tool =
    client === "codex"
      ? { tool_name: "apply_patch", tool_input: { command: "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch" } }
      : client === "gemini-cli"
        ? { tool_name: "write_file", tool_input: { file_path: "/repo/src/a.ts", content: "" } }
        : { tool_name: "Write", tool_input: { file_path: "/repo/src/a.ts", content: "" } };
  return { ...base, hook_event_name: "PreToolUse", ...tool };
}

describe("no < or > in hook text", () => {
  test("the policy, the summary, a denial, a wake-up and every fail-open line", () => {
    expect(policyText()).not.toMatch(ANGLE);
    expect(policyText("codex:s1")).not.toMatch(ANGLE);
    expect(offerReason("codex:s1", [{ pool: "heavy", expires: 20 }])).not.toMatch(ANGLE);
    expect(conflictMessage([{ path: "src/a.ts", held_by: "b", held_path: "src/**", witness: "src/a.ts", reason: "r", expires_in_seconds: 9 }])).not.toMatch(ANGLE);
    for (const e of HOOK_EVENTS) expect(failOpenMessage(e, "no Airlock daemon answers at http://127.0.0.1:1 (<html>)")).not.toMatch(ANGLE);
  });

  test("every adapter's answer to every event: with others' state, with the daemon down, with bad input", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { agent_id: "other", room: "/repo", paths: ["src/**"], reason: "refactor" });
    const held = await t.call("acquire_slot", { agent_id: "other", reason: "build" });
    for (const a of HOOK_ADAPTERS) await t.call("acquire_slot", { agent_id: `${a.client}:s1` });
    await t.call("release_slot", { slot_token: held.slot_token });
    await t.call("lock_resource", { name: "npm", agent_id: "other" });
    const up = appDeps(t, "/repo");
    const down: HookDeps = { tool: () => Promise.reject(new Error("no Airlock daemon answers")), status: () => Promise.reject(new Error("down")), repoRoots: () => ["/repo"] };
    let scanned = 0;
    for (const a of HOOK_ADAPTERS) {
      for (const e of a.events) {
        for (const [deps, raw] of [[up, JSON.stringify(inputFor(a.client, e))], [down, JSON.stringify(inputFor(a.client, e))], [down, "not json"]] as const) {
          const out = await runHook(a, e, raw, deps);
          const text = `${out.stdout ?? ""}${out.stderr ?? ""}`;
          expect(text).not.toMatch(ANGLE);
          scanned += text.length;
        }
      }
    }
    expect(scanned).toBeGreaterThan(1000);
    expect(othersSummary((await t.rpc("airlock/status")).result as Snapshot, "me")).not.toMatch(ANGLE);
  });

  test("codex: other agents' data with < or > reaches the model as look-alike quotes, not &lt;", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { agent_id: "other", room: "/repo", paths: ["src/**"], reason: "fix <Button> props" });
    const input = inputFor("codex", "pre-edit");
    const denied = await runHook(codex, "pre-edit", JSON.stringify(input), appDeps(t, "/repo"));
    expect(denied.stdout).not.toMatch(ANGLE);
    expect(JSON.parse(denied.stdout!).hookSpecificOutput.permissionDecisionReason).toContain('for "fix \u2039Button\u203a props"');
    const ctx = await runHook(codex, "session-start", JSON.stringify(inputFor("codex", "session-start")), appDeps(t, "/repo"));
    expect(ctx.stdout).not.toMatch(ANGLE);
  });
});
