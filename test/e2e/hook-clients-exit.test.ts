// `airlock hook` as a process for the clients whose answer is partly the exit code or a plain
// text stream (Kiro CLI: exit 2 + STDERR blocks, exit 1 = a warning; Cline: JSON on stdout),
// against a real daemon: what the client reads is exactly what the process prints and returns.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, runHook, useDaemon } from "../helpers/daemon.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const env = cliEnv(d);
const repo = mkdtempSync(join(tmpdir(), "airlock-hook-clients-"));
mkdirSync(join(repo, ".git"));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const hook = (client: string, event: string, stdin: unknown, extraEnv: Record<string, string> = {}) => runHook(client, event, stdin, { ...env, ...extraEnv });

describe("airlock hook kiro / cline / copilot-cli as processes", () => {
  test("kiro preToolUse: exit 2 with the conflict on STDERR inside a claim, exit 0 and silence outside; daemon down: exit 1", async () => {
    await d.call("claim_paths", { agent_id: "codex:other", room: repo, paths: ["src/**"], reason: "rewrite" });
    const input = (file: string) => ({ hook_event_name: "preToolUse", cwd: repo, tool_name: "fs_write", tool_input: { command: "create", path: join(repo, file), file_text: "x" } });
    const denied = await hook("kiro", "pre-edit", input("src/a.ts"));
    expect(denied.code).toBe(2);
    expect(denied.stdout).toBe("");
    expect(denied.stderr).toContain("src/a.ts is inside codex:other's claim src/**");
    expect(await hook("kiro", "pre-edit", input("docs/x.md"))).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const down = await hook("kiro", "pre-edit", input("src/a.ts"), { AIRLOCK_PORT: "1" });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("The edit is allowed, NOT checked");
  });

  test("kiro agentSpawn: the identity and policy as plain STDOUT, exit 0", async () => {
    const out = await hook("kiro", "session-start", { hook_event_name: "agentSpawn", cwd: repo });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/Your agent_id is `kiro:dir-[0-9a-f]{12}`/);
  });

  test("cline PreToolUse inside a claim: {cancel: true} on stdout, exit 0", async () => {
    await d.call("claim_paths", { agent_id: "codex:other", room: repo, paths: ["lib/**"], reason: "rewrite" });
    const out = await hook("cline", "pre-edit", { hookName: "PreToolUse", taskId: "t1", workspaceRoots: [repo], preToolUse: { toolName: "write_to_file", parameters: { path: "lib/a.ts", content: "x" } } });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout).cancel).toBe(true);
  });

  test("copilot-cli preToolUse inside a claim: permissionDecision deny, exit 0", async () => {
    await d.call("claim_paths", { agent_id: "codex:other", room: repo, paths: ["pkg/**"], reason: "rewrite" });
    const out = await hook("copilot-cli", "pre-edit", { sessionId: "s-1", timestamp: 1, cwd: repo, toolName: "create", toolArgs: { path: join(repo, "pkg/a.ts"), file_text: "x" } });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout).permissionDecision).toBe("deny");
  });
});
