// `airlock hook <client> <event>` end to end: the CLI (source or binary) as a client runs it,
// JSON on stdin, against a real daemon, in a scratch repository (a directory with `.git`), whose
// claims live in its own room (claims in other repositories are test/e2e/rooms.test.ts).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, runHook, useDaemon } from "../helpers/daemon.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const env = cliEnv(d);
const repo = mkdtempSync(join(tmpdir(), "airlock-hook-"));
mkdirSync(join(repo, ".git"));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const hook = (client: string, event: string, stdin: unknown, extraEnv: Record<string, string> = {}) => runHook(client, event, stdin, { ...env, ...extraEnv });

const preToolUse = (session: string, file: string) => ({
  session_id: session,
  transcript_path: "/tmp/t.jsonl",
  cwd: repo,
  hook_event_name: "PreToolUse",
  tool_name: "Edit",
  tool_input: { file_path: join(repo, file), old_string: "a", new_string: "b" },
});

describe("claude-code pre-edit", () => {
  test("another agent's claim blocks an edit inside it, naming holder and witness; a file outside is allowed", async () => {
    await d.call("claim_paths", { agent_id: "codex:other", room: repo, paths: ["src/api/**"], reason: "api rewrite" });
    const denied = await hook("claude-code", "pre-edit", preToolUse("s1", "src/api/users.ts"));
    expect(denied.code).toBe(0);
    const out = JSON.parse(denied.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toContain("src/api/users.ts is inside codex:other's claim src/api/** for \"api rewrite\" (both match src/api/users.ts;");

    const allowed = await hook("claude-code", "pre-edit", preToolUse("s1", "docs/readme.md"));
    expect(allowed).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  test("the agent's own claim does not block its edit", async () => {
    await d.call("claim_paths", { agent_id: "claude-code:s2", room: repo, paths: ["lib/**"] });
    expect(await hook("claude-code", "pre-edit", preToolUse("s2", "lib/a.ts"))).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const other = await hook("claude-code", "pre-edit", preToolUse("s3", "lib/a.ts"));
    expect(JSON.parse(other.stdout).hookSpecificOutput.permissionDecisionReason).toContain("claude-code:s2's claim lib/**");
  });
});

describe("claude-code stop", () => {
  test("an offered slot blocks stopping with the wake-up reason; once claimed, stopping is allowed", async () => {
    const held = await d.call("acquire_slot", { agent_id: "codex:holder", pool: "heavy", reason: "cargo test" });
    expect(held.granted).toBe(true);
    const queued = await d.call("acquire_slot", { agent_id: "claude-code:s4", reason: "bun test" });
    expect(queued.granted).toBe(false);
    const stop = { session_id: "s4", transcript_path: "/tmp/t.jsonl", hook_event_name: "Stop", stop_hook_active: false };
    expect(await hook("claude-code", "stop", stop)).toMatchObject({ code: 0, stdout: "" });

    await d.call("release_slot", { slot_token: held.slot_token });
    const pools = await d.call("list_pools");
    expect(pools.find((p: { pool: string }) => p.pool === "heavy").waiters[0]).toMatchObject({ agent_id: "claude-code:s4", state: "offered" });
    const blocked = await hook("claude-code", "stop", stop);
    expect(blocked.code).toBe(0);
    const body = JSON.parse(blocked.stdout);
    expect(body.decision).toBe("block");
    expect(body.reason).toContain('acquire_slot(agent_id="claude-code:s4", pool="heavy", wake_token=');

    const mine = await d.call("acquire_slot", { agent_id: "claude-code:s4", wake_token: queued.wake_token });
    expect(mine.granted).toBe(true);
    expect(await hook("claude-code", "stop", stop)).toMatchObject({ code: 0, stdout: "" });
    await d.call("release_slot", { slot_token: mine.slot_token });
  });
});

describe("claude-code session-start", () => {
  test("prints the policy with the agent id and what others hold", async () => {
    const r = await hook("claude-code", "session-start", { session_id: "s5", transcript_path: "/tmp/t.jsonl", cwd: repo, hook_event_name: "SessionStart", source: "startup" });
    expect(r.code).toBe(0);
    const ctx: string = JSON.parse(r.stdout).hookSpecificOutput.additionalContext;
    expect(ctx).toContain("Your agent_id is `claude-code:s5`");
    expect(ctx).toContain(`room=${JSON.stringify(repo)} (your working directory's checkout)`);
    expect(ctx).toContain("codex:other: src/api/** — api rewrite");
  });
});

describe("failing open", () => {
  test("daemon down: exit 0, the user told in systemMessage, one warning line, within a bounded time", async () => {
    const free = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = free.port;
    free.stop(true);
    const r = await hook("claude-code", "pre-edit", preToolUse("s6", "src/api/users.ts"), { AIRLOCK_PORT: String(port) });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(Object.keys(body)).toEqual(["systemMessage"]);
    expect(body.systemMessage).toContain("The edit is allowed, NOT checked against other agents' claims");
    // Codex reads the same field (its pre-tool-use output schema has systemMessage).
    const cx = await hook("codex", "pre-edit", { session_id: "x6", cwd: repo, hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: "*** Begin Patch\n*** Add File: a.ts\n+x\n*** End Patch" } }, { AIRLOCK_PORT: String(port) });
    expect(JSON.parse(cx.stdout).systemMessage).toContain("NOT checked");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("no Airlock daemon answers");
    expect(r.ms).toBeLessThan(5000);
  });

  test("a daemon that never answers: exit 0 after the client timeout, not a hang", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
    try {
      const r = await hook("claude-code", "stop", { session_id: "s7", hook_event_name: "Stop" }, { AIRLOCK_PORT: String(server.port) });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).systemMessage).toContain("Stopping is allowed");
      expect(r.stderr).toContain("allowing");
      expect(r.ms).toBeLessThan(6000);
    } finally {
      server.stop(true);
    }
  });

  test("stdin never closed, or malformed: exit 0 with a warning", async () => {
    const open = await hook("claude-code", "pre-edit", null);
    expect(open.code).toBe(0);
    expect(JSON.parse(open.stdout).systemMessage).toContain("malformed input");
    expect(open.stderr).toContain("malformed input");
    expect(open.ms).toBeLessThan(5000);
    const bad = await hook("claude-code", "pre-edit", "{not json");
    expect(bad.code).toBe(0);
    expect(JSON.parse(bad.stdout).systemMessage).toContain("stdin is not JSON");
    expect(bad.stderr).toContain("stdin is not JSON");
  });

  test("an unknown client or event is allowed with a warning, never an error", async () => {
    expect(await hook("vim", "pre-edit", {})).toMatchObject({ code: 0, stdout: "" });
    const r = await hook("claude-code", "post-edit", {});
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('unknown event "post-edit"');
    expect(JSON.parse(r.stdout).systemMessage).toContain("airlock setup claude-code");
  });
});

describe("other clients end to end", () => {
  test("codex apply_patch into a claimed region is denied; gemini-cli and cursor too", async () => {
    const patch = "*** Begin Patch\n*** Update File: src/api/users.ts\n@@\n-a\n+b\n*** End Patch\n";
    const cx = await hook("codex", "pre-edit", { session_id: "x1", cwd: repo, hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: patch } });
    expect(JSON.parse(cx.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    const gm = await hook("gemini-cli", "pre-edit", { session_id: "g1", cwd: repo, hook_event_name: "BeforeTool", tool_name: "write_file", tool_input: { file_path: join(repo, "src/api/x.ts"), content: "" } });
    expect(JSON.parse(gm.stdout).decision).toBe("deny");
    const cu = await hook("cursor", "pre-edit", { conversation_id: "c1", workspace_roots: [repo], hook_event_name: "preToolUse", tool_name: "Write", tool_input: { file_path: join(repo, "src/api/x.ts"), content: "" } });
    expect(cu.code).toBe(2);
    expect(JSON.parse(cu.stdout).permission).toBe("deny");
  });
});
