// Working trees against a real daemon over HTTP (SPEC §13, docs/worktrees.md): report_worktree and
// list_worktrees, check_paths' edited_by over globs (never making clear false), a touched path
// leaving once it is no longer dirty, the lapse with the agent, a restart keeping them, status
// and the change feed. In a real git repository, which the room resolves to. On both stores.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, runCli, useDaemon, useDaemonStarter } from "../helpers/daemon.ts";
import { gitRepo } from "../helpers/git.ts";

setDefaultTimeout(60_000);

const d = useDaemon();
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "airlock-wt-")));
const repo = gitRepo(join(scratch, "repo"), "https://github.com/org/wt-e2e.git");
const ROOM = "github.com/org/wt-e2e";
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let n = 0;
const agent = (register = false) => {
  const id = `wt-${++n}-${Math.random().toString(36).slice(2, 6)}`;
  return register ? d.call("register_agent", { agent_id: id, ttl_seconds: 300 }).then(() => id) : Promise.resolve(id);
};

describe("report_worktree and list_worktrees", () => {
  test("dirty is replaced, touched is added to and leaves once no longer dirty; the room is the repository's", async () => {
    const a = await agent();
    const r1 = await d.call("report_worktree", { agent_id: a, room: repo, branch: "feat-x", head: "0123abcd", dirty: ["src/a.ts", join(repo, "src/b.ts")], touched: ["src/a.ts"] });
    expect(r1).toEqual({ room: ROOM, dirty_count: 2, touched: ["src/a.ts"] });
    const r2 = await d.call("report_worktree", { agent_id: a, room: repo, branch: "feat-x", dirty: ["src/a.ts", "src/b.ts"], touched: ["src/b.ts"] });
    expect(r2.touched).toEqual(["src/a.ts", "src/b.ts"]);
    const r3 = await d.call("report_worktree", { agent_id: a, room: repo, branch: "feat-x", dirty: ["src/b.ts"] });
    expect(r3.touched).toEqual(["src/b.ts"]);
    const listed = (await d.call("list_worktrees", { room: repo })).find((w: any) => w.agent_id === a);
    expect(listed).toEqual({ agent_id: a, room: ROOM, branch: "feat-x", dirty_count: 1, touched: ["src/b.ts"], reported_at: listed.reported_at });
    expect(listed.reported_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("bad input is refused naming the field and the rule, and changes nothing", async () => {
    const a = await agent();
    const many = Array.from({ length: 2001 }, (_, i) => `f${i}.ts`);
    const cases: [Record<string, unknown>, string][] = [
      [{ dirty: many }, "dirty must have at most 2000 paths"],
      [{ dirty: ["../outside.ts"] }, 'dirty: paths must not contain ".."'],
      [{ touched: [""] }, "entries of touched must not be empty"],
      [{ touched: "src/a.ts" }, "touched must be an array of paths"],
      [{ head: "zzz" }, "head must be a commit id"],
      [{ room: undefined }, "missing room"],
    ];
    for (const [args, message] of cases) {
      const r = await d.call("report_worktree", { agent_id: a, room: repo, ...args });
      expect(r.isError).toBe(true);
      expect(r.error).toContain(message);
    }
    expect((await d.call("list_worktrees", {})).filter((w: any) => w.agent_id === a)).toEqual([]);
  });
});

describe("check_paths edited_by", () => {
  test("names other agents' uncommitted edits overlapping the paths (globs too) with their branch; clear stays true", async () => {
    const [a, b] = [await agent(), await agent()];
    await d.call("report_worktree", { agent_id: a, room: repo, branch: "feat-a", dirty: ["src/api/users.ts", "README.md"], touched: ["src/api/users.ts"] });
    const file = await d.call("check_paths", { paths: [join(repo, "src/api/users.ts")], room: repo, agent_id: b });
    expect(file.clear).toBe(true);
    expect(file.conflicts).toEqual([]);
    expect(file.edited_by).toEqual([{ path: "src/api/users.ts", agent_id: a, branch: "feat-a", since: file.edited_by[0].since }]);
    expect((await d.call("check_paths", { paths: ["src/**/*.ts"], room: repo, agent_id: b })).edited_by.map((e: any) => e.agent_id)).toContain(a);
    // Not touched (only dirty), not overlapping, or the asker's own: nothing, and the key is absent.
    expect(await d.call("check_paths", { paths: ["README.md", "src/web/**"], room: repo, agent_id: b })).toEqual({ clear: true, room: ROOM, conflicts: [] });
    expect((await d.call("check_paths", { paths: ["src/api/users.ts"], room: repo, agent_id: a })).edited_by).toBeUndefined();
    // Committed: no longer dirty, no longer an edit anyone must be told of.
    await d.call("report_worktree", { agent_id: a, room: repo, branch: "feat-a", dirty: [] });
    expect((await d.call("check_paths", { paths: ["src/api/users.ts"], room: repo, agent_id: b })).edited_by).toBeUndefined();
  });

  test("a claim and an edit at once: the conflict denies, edited_by is said beside it", async () => {
    const [a, b, c] = [await agent(), await agent(), await agent()];
    await d.call("report_worktree", { agent_id: a, room: repo, dirty: ["lib/x.ts"], touched: ["lib/x.ts"] });
    const claim = await d.call("claim_paths", { agent_id: b, room: repo, paths: ["lib/**"] });
    const r = await d.call("check_paths", { paths: ["lib/x.ts"], room: repo, agent_id: c });
    expect(r.clear).toBe(false);
    expect(r.conflicts.map((x: any) => x.held_by)).toEqual([b]);
    expect(r.edited_by.map((x: any) => x.agent_id)).toEqual([a]);
    await d.call("release_paths", { claim_token: claim.claim_token });
  });
});

describe("lapse, feed and views", () => {
  test("an unregistered agent's report goes with it, and the change feed carries worktree.reported and worktree.dropped", async () => {
    const a = await agent(true);
    const before = (await d.call("watch_changes", {})).revision;
    await d.call("report_worktree", { agent_id: a, room: repo, branch: "gone-soon", dirty: ["gone.ts"], touched: ["gone.ts"] });
    const status = (await d.rpc("airlock/status", {})).result;
    expect(status.worktrees).toContainEqual({ room: ROOM, agent_id: a, branch: "gone-soon", dirty_count: 1, touched: ["gone.ts"], reported_seconds: expect.any(Number) });
    const text = await runCli(["status"], cliEnv(d));
    expect(text.stdout).toContain("WORKTREES");
    expect(text.stdout).toContain(`${a}  room ${ROOM}  on gone-soon  1 uncommitted  edited gone.ts`);
    await d.call("unregister_agent", { agent_id: a });
    expect((await d.call("list_worktrees", { room: repo })).map((w: any) => w.agent_id)).not.toContain(a);
    const feed = await d.call("watch_changes", { since_revision: before, kinds: ["worktree."] });
    const mine = feed.changes.filter((c: any) => c.agent_id === a).map((c: any) => [c.kind, c.reason ?? null]);
    expect(mine).toEqual([
      ["worktree.reported", null],
      ["worktree.dropped", "unregistered"],
    ]);
  });
});

describe("a restart", () => {
  const start = useDaemonStarter();
  test("keeps the reports and check_paths' edited_by (kill -9)", async () => {
    const first = await start();
    await first.call("report_worktree", { agent_id: "A", room: repo, branch: "kept", dirty: ["k.ts"], touched: ["k.ts"] });
    expect(await first.kill(9)).not.toBeNull();
    const again = await start({ home: first.home, db: first.db });
    expect((await again.call("check_paths", { paths: ["k.ts"], room: repo, agent_id: "B" })).edited_by).toMatchObject([{ path: "k.ts", agent_id: "A", branch: "kept" }]);
    await again.kill();
  });
});
