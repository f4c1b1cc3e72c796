// The hooks' working-tree reports end to end (SPEC §13, docs/worktrees.md): `airlock hook` run as a
// client runs it, against a real daemon, in a real git repository. Session start reports the
// branch, HEAD and uncommitted paths; an edit reports its file as touched, debounced (a second
// edit right after waits for the stop, which always sends it); the pre-edit hook tells the model
// of another agent's uncommitted edit, naming it and its branch, and refuses the edit only under
// AIRLOCK_EDIT_POLICY=strict.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, runHook, useDaemon } from "../helpers/daemon.ts";
import { git, gitRepo } from "../helpers/git.ts";

setDefaultTimeout(60_000);

const d = useDaemon();
const env = cliEnv(d);
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "airlock-hook-wt-")));
const repo = gitRepo(join(scratch, "repo"), "https://github.com/org/hook-wt.git");
mkdirSync(join(repo, "src"));
for (const f of ["a.ts", "b.ts", "c.ts"]) writeFileSync(join(repo, "src", f), "export {};\n");
git(repo, "add", ".");
git(repo, "commit", "-q", "-m", "files");
const HEAD = git(repo, "rev-parse", "HEAD").trim();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const hook = (event: string, stdin: unknown, extraEnv: Record<string, string> = {}) => runHook("claude-code", event, stdin, { ...env, ...extraEnv });

const start = (session: string) => hook("session-start", { session_id: session, cwd: repo, hook_event_name: "SessionStart", source: "startup" });
const edit = (session: string, file: string, extraEnv?: Record<string, string>) =>
  hook("pre-edit", { session_id: session, cwd: repo, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: join(repo, file), old_string: "a", new_string: "b" } }, extraEnv);
const stop = (session: string) => hook("stop", { session_id: session, cwd: repo, hook_event_name: "Stop", stop_hook_active: false });
const tree = async (agentId: string) => (await d.call("list_worktrees", { room: repo })).find((w: any) => w.agent_id === agentId);

describe("reports", () => {
  test("session start reports the branch, HEAD and the uncommitted paths", async () => {
    writeFileSync(join(repo, "notes.md"), "draft\n");
    const r = await start("s1");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(await tree("claude-code:s1")).toMatchObject({ branch: "main", head: HEAD, dirty_count: 1, touched: [] });
  });

  test("an edit reports its file as touched; one right after is debounced until the stop, which sends it", async () => {
    expect(await edit("s2", "src/b.ts")).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect((await tree("claude-code:s2")).touched).toEqual(["src/b.ts"]);
    writeFileSync(join(repo, "src/b.ts"), "export const b = 1;\n");
    expect(await edit("s2", "src/c.ts")).toMatchObject({ code: 0, stdout: "" });
    expect((await tree("claude-code:s2")).touched).toEqual(["src/b.ts"]); // within the debounce: not sent yet
    writeFileSync(join(repo, "src/c.ts"), "export const c = 1;\n");
    expect(await stop("s2")).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(await tree("claude-code:s2")).toMatchObject({ branch: "main", touched: ["src/b.ts", "src/c.ts"] });
    // Committed: the next report finds them clean, and they leave.
    git(repo, "commit", "-q", "-am", "b and c");
    await d.call("report_worktree", { agent_id: "claude-code:s2", room: repo, dirty: ["notes.md"] });
    expect((await tree("claude-code:s2")).touched).toEqual([]);
  });
});

describe("pre-edit and another agent's uncommitted edit", () => {
  test("the model is told, naming the agent and its branch; the edit goes ahead", async () => {
    await d.call("report_worktree", { agent_id: "codex:other", room: repo, branch: "feat-users", dirty: ["src/a.ts"], touched: ["src/a.ts"] });
    const r = await edit("s3", "src/a.ts");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBeUndefined();
    expect(out.additionalContext).toContain("- src/a.ts: uncommitted edit by codex:other on branch feat-users");
    expect(out.additionalContext).toContain('send_message(from="claude-code:s3", to=["codex:other"]');
    expect(out.additionalContext).not.toMatch(/[<>]/);
  });

  test("under AIRLOCK_EDIT_POLICY=strict the edit is refused with the same names", async () => {
    const r = await edit("s4", "src/a.ts", { AIRLOCK_EDIT_POLICY: "strict" });
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toContain("uncommitted edit by codex:other on branch feat-users");
    expect(out.permissionDecisionReason).toContain("AIRLOCK_EDIT_POLICY=strict");
    // Refused: nothing of s4's was reported as touched.
    expect(await tree("claude-code:s4")).toBeUndefined();
  });

  test("another session start lists the uncommitted edits of others", async () => {
    const ctx: string = JSON.parse((await start("s5")).stdout).hookSpecificOutput.additionalContext;
    expect(ctx).toContain("Uncommitted edits (report_worktree):");
    expect(ctx).toContain("codex:other on feat-users: src/a.ts");
  });
});
