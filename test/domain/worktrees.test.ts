import { describe, expect, test } from "bun:test";
// Working trees (src/domain/worktrees.ts): reports, touched paths leaving when no longer dirty,
// edited_by over globs, lapse with the agent and after the TTL, a restart keeping them.
import { AirlockError } from "../../src/errors.ts";
import { MAX_DIRTY, type ReportRequest, WORKTREE_TTL_MS } from "../../src/domain/worktrees.ts";
import { useKernel } from "../helpers/kernel.ts";
import { flush, useRestarts } from "./support.ts";

const t = useKernel();
const wt = () => t.kernel.worktrees;
const R = "github.com/org/repo";

const report = (agentId: string, more: Partial<ReportRequest> = {}) => wt().report({ agentId, room: R, dirty: [], touched: [], ...more });

async function refused(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AirlockError);
    return (err as Error).message;
  }
  throw new Error("not refused");
}

async function kinds(prefix: string): Promise<string[]> {
  return (await t.kernel.journal.since(0)).filter((e) => e.kind.startsWith(prefix)).map((e) => e.kind);
}

describe("report and list", () => {
  test("dirty is replaced at each report, touched is added to, and a touched path leaves once it is no longer dirty", async () => {
    await report("A", { branch: "feat", head: "abc1234", dirty: ["src/a.ts", "src/b.ts"], touched: ["src/a.ts"] });
    t.clock.advance(1000);
    const second = await report("A", { branch: "feat", head: "abc1234", dirty: ["./src/a.ts", "src/b.ts", "src/c.ts"], touched: ["src/c.ts"] });
    expect(second.touched.map((x) => x.path)).toEqual(["src/a.ts", "src/c.ts"]);
    expect(second.touched[0]!.since).toBeLessThan(second.touched[1]!.since); // the first report's time is kept
    // src/a.ts committed: no longer dirty, so no longer touched either.
    const third = await report("A", { branch: "feat", head: "def5678", dirty: ["src/c.ts"] });
    expect(third.touched.map((x) => x.path)).toEqual(["src/c.ts"]);
    const [listed] = await wt().list(R);
    expect(listed).toMatchObject({ agentId: "A", branch: "feat", head: "def5678", dirty: ["src/c.ts"] });
  });

  test("a touched path under a dirty new directory (git lists it as dir/) stays", async () => {
    const r = await report("A", { dirty: ["newdir/"], touched: ["newdir/x.ts"] });
    expect(r.touched.map((x) => x.path)).toEqual(["newdir/x.ts"]);
  });

  test("only a report that changes something is journalled", async () => {
    await report("A", { dirty: ["a.ts"], touched: ["a.ts"] });
    await report("A", { dirty: ["a.ts"], touched: ["a.ts"] });
    await report("A", { dirty: ["a.ts", "b.ts"] });
    expect(await kinds("worktree.")).toEqual(["worktree.reported", "worktree.reported"]);
  });
});

describe("edited_by", () => {
  test("names other agents' touched paths that overlap the paths asked about, globs included, never the asker's own", async () => {
    await report("A", { branch: "feat-a", dirty: ["src/api/users.ts", "docs/x.md"], touched: ["src/api/users.ts", "docs/x.md"] });
    await report("B", { branch: "feat-b", dirty: ["src/api/route.ts"], touched: ["src/api/route.ts"] });
    expect(wt().editedBy(R, ["src/api/users.ts"], "C").map((e) => [e.path, e.agentId, e.branch])).toEqual([["src/api/users.ts", "A", "feat-a"]]);
    expect(wt().editedBy(R, ["src/api/**"], "C").map((e) => e.agentId).sort()).toEqual(["A", "B"]);
    expect(wt().editedBy(R, ["src/*/users.ts"], "A")).toEqual([]);
    expect(wt().editedBy(R, ["src/web/**"], "C")).toEqual([]);
    expect(wt().editedBy("other-room", ["src/api/**"], "C")).toEqual([]);
  });

  test("a dirty path the agent did not touch is no edit of its own", async () => {
    await report("A", { dirty: ["src/generated.ts"] });
    expect(wt().editedBy(R, ["src/generated.ts"], "C")).toEqual([]);
  });

  test("a path with glob characters in its name matches only itself", async () => {
    await report("A", { dirty: ["src/[id].ts"], touched: ["src/[id].ts"] });
    expect(wt().editedBy(R, ["src/i.ts"], "C")).toEqual([]);
    expect(wt().editedBy(R, ["src/*.ts"], "C").map((e) => e.path)).toEqual(["src/[id].ts"]);
  });
});

describe("lapse", () => {
  test("a departure drops the agent's reports, and says so in the journal", async () => {
    await t.kernel.presence.register("A", 10_000);
    await report("A", { dirty: ["a.ts"], touched: ["a.ts"] });
    t.clock.advance(10_001);
    await flush();
    expect(await wt().list()).toEqual([]);
    expect(wt().editedBy(R, ["a.ts"], "C")).toEqual([]);
    expect(await kinds("worktree.")).toEqual(["worktree.reported", "worktree.dropped"]);
  });

  test("a report nobody refreshes goes after the TTL; a refresh keeps it", async () => {
    await report("A", { dirty: ["a.ts"], touched: ["a.ts"] });
    t.clock.advance(WORKTREE_TTL_MS - 1000);
    await report("A", { dirty: ["a.ts"] });
    t.clock.advance(2000);
    await flush();
    expect(wt().editedBy(R, ["a.ts"], "C")).toHaveLength(1);
    t.clock.advance(WORKTREE_TTL_MS);
    await flush();
    expect(await wt().list()).toEqual([]);
  });
});

describe("bad input", () => {
  test("too many paths, .. segments and a bad head are refused, naming the field, and change nothing", async () => {
    const many = Array.from({ length: MAX_DIRTY + 1 }, (_, i) => `f${i}.ts`);
    expect(await refused(report("A", { dirty: many }))).toContain(`dirty must have at most ${MAX_DIRTY} paths`);
    expect(await refused(report("A", { dirty: ["../etc/passwd"] }))).toContain("dirty: paths must not contain \"..\"");
    expect(await refused(report("A", { touched: ["/abs/x.ts"] }))).toContain("touched: absolute paths");
    expect(await refused(report("A", { head: "not a sha" }))).toContain("head must be a commit id");
    expect(await wt().list()).toEqual([]);
  });
});

describe("restart", () => {
  const r = useRestarts();
  test("a restart keeps the reports and their index", async () => {
    const k1 = await r.openAt(1_000_000);
    await k1.kernel.worktrees.report({ agentId: "A", room: R, branch: "feat", dirty: ["x.ts"], touched: ["x.ts"] });
    await r.shut(k1);
    const k2 = await r.openAt(1_000_500);
    expect(k2.kernel.worktrees.editedBy(R, ["x.ts"], "B").map((e) => [e.agentId, e.branch])).toEqual([["A", "feat"]]);
  });
});
