// A room is a repository, end to end (issue 16's defect): `airlock claim` run in repository A
// and the claude-code pre-edit hook run in repository B, against one real daemon. Before, both
// used room `default` with repository-relative paths, so A's `src/**` refused B's own
// `src/index.ts`. Also: a claim from a subdirectory is relative to the top level, a worktree
// and a clone share the claims, `check --staged` and `claims` use the working directory's room.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, daemonCommand, useDaemon } from "../helpers/daemon.ts";
import { git, gitRepo } from "../helpers/git.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const env = cliEnv(d);
const base = realpathSync(mkdtempSync(join(tmpdir(), "airlock-rooms-e2e-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const repoA = gitRepo(join(base, "a"));
const repoB = gitRepo(join(base, "b"));
for (const r of [repoA, repoB]) mkdirSync(join(r, "src", "api"), { recursive: true });

/** Runs the CLI (source or binary) in `cwd`, with `stdin` written and closed when given. */
async function airlock(cwd: string, args: string[], stdin?: unknown) {
  const proc = Bun.spawn([...daemonCommand(), ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdin: stdin === undefined ? "ignore" : "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  if (stdin !== undefined && proc.stdin) {
    proc.stdin.write(JSON.stringify(stdin));
    await proc.stdin.end();
  }
  const killer = setTimeout(() => proc.kill(9), 20_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  return { stdout, stderr, code };
}

/** Claude Code's PreToolUse for a Write of `file`, from a session running in `cwd`. */
const write = (session: string, cwd: string, file: string) => ({
  session_id: session,
  transcript_path: "/tmp/t.jsonl",
  cwd,
  hook_event_name: "PreToolUse",
  tool_name: "Write",
  tool_input: { file_path: file, content: "export {};\n" },
});

describe("the defect: a claim in one repository blocked the same path in another", () => {
  test("A claims src/** with airlock claim; the pre-edit hook allows src/index.ts in B and denies it in A, naming holder, claim and witness", async () => {
    const c = await airlock(repoA, ["claim", "--agent", "agent-a", "--reason", "refactor", "src/**"]);
    expect(c).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[0-9a-f]{32}\n$/) });

    const inB = await airlock(repoB, ["hook", "claude-code", "pre-edit"], write("sess-b", repoB, join(repoB, "src", "index.ts")));
    expect(inB).toEqual({ code: 0, stdout: "", stderr: "" });

    const inA = await airlock(repoA, ["hook", "claude-code", "pre-edit"], write("sess-b", repoA, join(repoA, "src", "index.ts")));
    expect(inA.code).toBe(0);
    const out = JSON.parse(inA.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toContain('src/index.ts is inside agent-a\'s claim src/** for "refactor" (both match src/index.ts;');

    // The claim lives in A's room, named by A's main worktree; the CLI lists it from A only.
    expect(await d.call("list_path_claims", { room: repoA })).toMatchObject([{ agent_id: "agent-a", room: repoA, paths: ["src/**"] }]);
    expect((await airlock(repoA, ["claims"])).stdout).toContain(`${repoA}  agent-a  src/**`);
    expect((await airlock(repoB, ["claims"])).stdout).toContain("(no claims in this room");
    expect((await airlock(repoB, ["check", "--agent", "someone", "src/index.ts"])).stdout).toBe("clear\n");
    expect((await airlock(repoA, ["check", "--agent", "someone", "src/index.ts"])).code).toBe(1);
  });
});

describe("the working directory's room", () => {
  test("a claim made from a subdirectory is relative to the top level, and a leading .. climbs from there", async () => {
    const sub = join(repoB, "src");
    const c = await airlock(sub, ["claim", "--agent", "sub-agent", "api/**", "../docs/guide.md"]);
    expect(c.code).toBe(0);
    expect(await d.call("list_path_claims", { room: repoB })).toMatchObject([{ agent_id: "sub-agent", paths: ["src/api/**", "docs/guide.md"] }]);
    const above = await airlock(sub, ["claim", "--agent", "sub-agent", "../../x"]);
    expect(above.code).toBe(1);
    expect(above.stderr).toContain("climbs above the top level");
    await airlock(sub, ["unclaim", c.stdout.trim()]);
  });

  test("a linked worktree and a clone share the repository's claims with its main worktree", async () => {
    const up = gitRepo(join(base, "up"), "git@github.com:org/shared.git");
    const wt = join(base, "up-wt");
    git(up, "worktree", "add", "-q", wt);
    const clone = join(base, "up-clone");
    git(base, "clone", "-q", up, clone);
    git(clone, "remote", "set-url", "origin", "https://github.com/org/shared");
    mkdirSync(join(clone, "lib"));

    expect((await airlock(wt, ["claim", "--agent", "wt-agent", "lib/**"])).code).toBe(0);
    const r = await airlock(join(clone, "lib"), ["check", "--agent", "clone-agent", "a.ts"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("lib/a.ts: held by wt-agent as lib/** (both match lib/a.ts)");
    expect(await d.call("list_path_claims", { room: up })).toMatchObject([{ agent_id: "wt-agent", room: "github.com/org/shared" }]);
  });

  test("check --staged, from a subdirectory, checks git's paths in the repository's room", async () => {
    const repo = gitRepo(join(base, "staged"));
    mkdirSync(join(repo, "app", "deep"), { recursive: true });
    writeFileSync(join(repo, "app", "main.ts"), "x\n");
    await d.call("claim_paths", { agent_id: "holder", room: repo, paths: ["app/**"] });
    // Another repository's claim on the same path is not this repository's.
    await d.call("claim_paths", { agent_id: "holder", room: repoB, paths: ["README.md"] });
    writeFileSync(join(repo, "README.md"), "x\n");
    git(repo, "add", "README.md");
    expect(await airlock(join(repo, "app", "deep"), ["check", "--staged", "--agent", "me"])).toMatchObject({ code: 0, stdout: "clear\n" });
    git(repo, "add", "app/main.ts");
    const r = await airlock(join(repo, "app", "deep"), ["check", "--staged", "--agent", "me"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("app/main.ts: held by holder as app/** (both match app/main.ts)");
  });

  test("--room NAME overrides the working directory, and paths go as given", async () => {
    const c = await airlock(join(repoA, "src"), ["claim", "--room", "named", "--agent", "n", "api/**"]);
    expect(c.code).toBe(0);
    expect(await d.call("list_path_claims", { room: "named" })).toMatchObject([{ agent_id: "n", room: "named", paths: ["api/**"] }]);
  });
});

// The reviewer's ways an edit still got through silently (each reproduced first, then fixed).
describe("what the pre-edit hook checks besides the checkout's own room", () => {
  const denial = (r: { code: number; stdout: string }) => {
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("deny");
    return out.permissionDecisionReason as string;
  };

  test("a claim made without room (in `default`, repository-relative) still stops the edit; its answer warns to pass room", async () => {
    const repo = gitRepo(join(base, "roomless"));
    const c = await airlock(repo, ["call", "claim_paths", JSON.stringify({ agent_id: "bob", paths: ["src/deep/x.ts"] })]);
    expect(c.code).toBe(0);
    const answer = JSON.parse(c.stdout);
    expect(answer).toMatchObject({ granted: true, room: "default" });
    expect(answer.warning).toContain("Pass your working directory (absolute) as room");
    const reason = denial(await airlock(repo, ["hook", "claude-code", "pre-edit"], write("sess-r", repo, join(repo, "src", "deep", "x.ts"))));
    expect(reason).toContain("src/deep/x.ts is inside bob's claim src/deep/x.ts [room default]");
    // `airlock check` asks check_paths too, so it sees it as well.
    const chk = await airlock(repo, ["check", "--agent", "someone", "src/deep/x.ts"]);
    expect(chk.code).toBe(1);
    expect(chk.stderr).toContain("held by bob as src/deep/x.ts");
    await d.call("release_paths", { claim_token: answer.claim_token });
  });

  test("a claim reaching into a nested repository (or submodule) from the parent stops an edit inside it", async () => {
    const parent = gitRepo(join(base, "parent"));
    const inner = gitRepo(join(parent, "sub"));
    mkdirSync(join(inner, "lib"), { recursive: true });
    expect((await airlock(parent, ["claim", "--agent", "outer", "sub/**"])).code).toBe(0);
    const reason = denial(await airlock(inner, ["hook", "claude-code", "pre-edit"], write("sess-n", inner, join(inner, "lib", "a.ts"))));
    expect(reason).toContain("sub/lib/a.ts is inside outer's claim sub/**");
    // And a claim in the inner repository is still seen from there.
    expect((await airlock(inner, ["claim", "--agent", "inner-agent", "docs/**"])).code).toBe(0);
    denial(await airlock(parent, ["hook", "claude-code", "pre-edit"], write("sess-n", parent, join(inner, "docs", "x.md"))));
  });

  test("the same through a real submodule (a `.git` file pointing into the parent's modules)", async () => {
    const lib = gitRepo(join(base, "sm-lib"));
    const parent = gitRepo(join(base, "sm-parent"));
    git(parent, "submodule", "add", "-q", lib, "vendor/lib");
    expect((await airlock(join(parent, "vendor"), ["claim", "--agent", "outer", "lib/src/**"])).code).toBe(0);
    const file = join(parent, "vendor", "lib", "src", "a.ts");
    const reason = denial(await airlock(join(parent, "vendor", "lib"), ["hook", "claude-code", "pre-edit"], write("sess-s", join(parent, "vendor", "lib"), file)));
    expect(reason).toContain("vendor/lib/src/a.ts is inside outer's claim vendor/lib/src/**");
  });

  test("adding origin moves the room to the URL; claims made before stay checked (the main worktree's path is an alias)", async () => {
    const r3 = gitRepo(join(base, "r3"));
    mkdirSync(join(r3, "src"));
    expect((await airlock(r3, ["claim", "--agent", "early", "src/**"])).code).toBe(0);
    git(r3, "remote", "add", "origin", "git@github.com:org/r3.git");
    await Bun.sleep(2500); // past the daemon's ROOM_CACHE_MS (2 s): the room is now the URL
    expect(await d.call("check_paths", { room: r3, paths: ["src/a.ts"], agent_id: "x" })).toMatchObject({ room: "github.com/org/r3" });
    const reason = denial(await airlock(r3, ["hook", "claude-code", "pre-edit"], write("sess-o", r3, join(r3, "src", "a.ts"))));
    expect(reason).toContain(`src/a.ts is inside early's claim src/** [room ${r3}]`);
    // A new claim there is granted in the URL room, and told about the stranded one.
    const c = await d.call("claim_paths", { agent_id: "late", room: r3, paths: ["src/b.ts"] });
    expect(c).toMatchObject({ granted: true, room: "github.com/org/r3" });
    expect(c.warning).toContain("early");
  });
});

describe("the session's policy names the checkout's top level as room", () => {
  test("a session started in a subdirectory is told the top level, as the pre-edit hook sends it", async () => {
    const repo = gitRepo(join(base, "policy"));
    mkdirSync(join(repo, "src"));
    const start = { session_id: "sess-p", transcript_path: "/tmp/t.jsonl", cwd: join(repo, "src"), hook_event_name: "SessionStart", source: "startup" };
    const r = await airlock(join(repo, "src"), ["hook", "claude-code", "session-start"], start);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.additionalContext).toContain(`room=${JSON.stringify(repo)}`);
  });
});
