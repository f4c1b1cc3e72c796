import { afterAll, describe, expect, test } from "bun:test";
// The hooks' `git status` reader (src/clients/hooks/worktree.ts) on a real repository: branch,
// HEAD, every kind of uncommitted path (modified, staged, renamed, untracked, a new directory),
// the path cap, and the policy setting.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { editedByMessage, editPolicy, gitStatus, parseStatus } from "../../../src/clients/hooks/worktree.ts";
import { git, gitRepo } from "../../helpers/git.ts";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "airlock-gitstatus-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("gitStatus", () => {
  test("reads branch, HEAD and modified, staged, renamed, untracked and new-directory paths (spaces kept)", async () => {
    const repo = gitRepo(join(scratch, "r1"));
    for (const f of ["a.ts", "b.ts", "old name.ts"]) writeFileSync(join(repo, f), "x\n");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "files");
    writeFileSync(join(repo, "a.ts"), "changed\n");
    writeFileSync(join(repo, "b.ts"), "staged\n");
    git(repo, "add", "b.ts");
    git(repo, "mv", "old name.ts", "new name.ts");
    writeFileSync(join(repo, "untracked.md"), "u\n");
    mkdirSync(join(repo, "newdir"));
    writeFileSync(join(repo, "newdir", "x.ts"), "n\n");
    const s = await gitStatus(repo);
    expect(s).toBeDefined();
    expect(s!.branch).toBe("main");
    expect(s!.head).toBe(git(repo, "rev-parse", "HEAD").trim());
    expect(s!.dirty.sort()).toEqual(["a.ts", "b.ts", "new name.ts", "newdir/", "untracked.md"]);
    expect(s!.truncated).toBe(false);
  });

  test("past the path cap the list is cut and says so; outside a repository there is no status", async () => {
    const repo = gitRepo(join(scratch, "r2"));
    for (let i = 0; i < 6; i++) writeFileSync(join(repo, `f${i}.ts`), "x\n");
    const s = await gitStatus(repo, 5000, 3);
    expect(s!.dirty).toHaveLength(3);
    expect(s!.truncated).toBe(true);
    const outside = join(scratch, "plain");
    mkdirSync(outside);
    expect(await gitStatus(outside)).toBeUndefined();
  });

  test("a detached HEAD has no branch; a cut output's half path is dropped", () => {
    expect(parseStatus("# branch.oid 0123abcd\0# branch.head (detached)\0? done.ts\0? half")).toEqual({ head: "0123abcd", dirty: ["done.ts"], truncated: false });
  });
});

describe("the edit policy", () => {
  test("advisory by default; strict when asked; anything else is advisory with a warning", () => {
    expect(editPolicy(undefined)).toEqual({ policy: "advisory" });
    expect(editPolicy("Strict")).toEqual({ policy: "strict" });
    expect(editPolicy("block").warning).toContain("AIRLOCK_EDIT_POLICY must be advisory or strict");
  });

  test("the message names each file, agent and branch, and holds no angle brackets", () => {
    const m = editedByMessage("me", [{ path: "src/a.ts", agent_id: "codex:x", branch: "feat", since: "2026-01-01T00:00:00.000Z" }], false);
    expect(m).toContain("- src/a.ts: uncommitted edit by codex:x on branch feat");
    expect(m).not.toMatch(/[<>]/);
    expect(editedByMessage("me", [{ path: "src/<x>.ts", agent_id: "a", branch: "b<1>", since: "t" }], true)).not.toMatch(/[<>]/);
  });
});
