// Other agents' messages through `airlock hook <client> post-tool|prompt|stop`, end to end: the CLI
// (source or binary) as a client runs it, JSON on stdin, against a real daemon (SQLite, or
// PostgreSQL with AIRLOCK_TEST_STORE=postgres). Two hook processes of one session firing at once
// never both deliver a message; a daemon that is down lets the tool call through, saying so.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cliEnv, ROOT, runHook, useDaemon } from "../helpers/daemon.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const env = cliEnv(d);

const hook = (client: string, event: string, stdin: unknown, extraEnv: Record<string, string> = {}) => runHook(client, event, stdin, { ...env, ...extraEnv });

const postToolUse = (session: string) => ({ session_id: session, cwd: ROOT, hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_response: {} });
const context = (stdout: string): string => (stdout ? (JSON.parse(stdout).hookSpecificOutput?.additionalContext ?? "") : "");
const shownIds = (text: string) => [...text.matchAll(/^--- message (\d+) from /gm)].map((m) => Number(m[1]));

describe("messages through the hooks", () => {
  test("a message sent by another agent reaches the session's next tool boundary once, then never again", async () => {
    await d.call("register_agent", { agent_id: "claude-code:e1" });
    const sent = await d.call("send_message", { from: "codex:peer", to: ["claude-code:e1"], subject: "route.ts", body: "how long will you be?" });
    const first = await hook("claude-code", "post-tool", postToolUse("e1"));
    expect(first.code).toBe(0);
    const body = JSON.parse(first.stdout).hookSpecificOutput;
    expect(body.hookEventName).toBe("PostToolUse");
    expect(shownIds(body.additionalContext)).toEqual([sent.message_id]);
    expect(body.additionalContext).toContain(`--- message ${sent.message_id} from codex:peer, subject "route.ts" ---\n    how long will you be?\n`);
    expect(await hook("claude-code", "post-tool", postToolUse("e1"))).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await hook("claude-code", "prompt", { session_id: "e1", cwd: ROOT, hook_event_name: "UserPromptSubmit", prompt: "go" })).toMatchObject({ code: 0, stdout: "" });
    // Another session of another agent sees nothing of it.
    expect(await hook("claude-code", "post-tool", postToolUse("e2"))).toMatchObject({ code: 0, stdout: "" });
  });

  test("two hook processes of one session at once: every message is shown by exactly one of them", async () => {
    await d.call("register_agent", { agent_id: "claude-code:e3" });
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await d.call("send_message", { from: "codex:peer", to: ["claude-code:e3"], body: `note ${i}` })).message_id);
    const [a, b] = await Promise.all([hook("claude-code", "post-tool", postToolUse("e3")), hook("claude-code", "post-tool", postToolUse("e3"))]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const shown = [...shownIds(context(a.stdout)), ...shownIds(context(b.stdout))].sort((x, y) => x - y);
    expect(shown).toEqual(ids);
  });

  test("an ack_required message holds one stop; the next stop goes", async () => {
    await d.call("register_agent", { agent_id: "codex:e4" });
    const sent = await d.call("send_message", { from: "claude-code:peer", to: ["codex:e4"], body: "ack please", ack_required: true });
    const stop = { session_id: "e4", cwd: ROOT, hook_event_name: "Stop", stop_hook_active: false };
    const held = await hook("codex", "stop", stop);
    const out = JSON.parse(held.stdout);
    expect(out.decision).toBe("block");
    expect(out.reason).toContain(`message ${sent.message_id} from claude-code:peer asks for an ack`);
    expect(out.reason).toContain("\n    ack please\n");
    expect(await hook("codex", "stop", stop)).toMatchObject({ code: 0, stdout: "" });
  });

  test("daemon down at a tool boundary: exit 0, the user told in systemMessage, one warning line", async () => {
    const free = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = free.port;
    free.stop(true);
    const r = await hook("claude-code", "post-tool", postToolUse("e5"), { AIRLOCK_PORT: String(port) });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).systemMessage).toContain("Messages from other agents are not delivered until it answers");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
