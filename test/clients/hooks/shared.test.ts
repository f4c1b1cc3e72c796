// The client-independent parts of the hooks: bounded stdin, where a target file is checked
// (its checkout's room), and the one-screen summary of what others hold.
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeCode } from "../../../src/clients/hooks/claude-code.ts";
import { editTargets, gitRoot, gitRoots, othersSummary, readStdin, runHook } from "../../../src/clients/hooks/shared.ts";
import type { Snapshot } from "../../../src/domain/snapshot.ts";

const stream = (parts: string[], close = true) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(new TextEncoder().encode(p));
      if (close) c.close();
    },
  });

describe("readStdin", () => {
  test("reads everything until the pipe closes", async () => {
    expect(await readStdin(stream(['{"a":', "1}"]))).toBe('{"a":1}');
  });
  test("gives up on a pipe left open, after its timeout", async () => {
    const t0 = Date.now();
    expect(await readStdin(stream(["{"], false), 100)).toBeUndefined();
    // It gave up rather than hang (which would meet the test's 5 s timeout); seconds, for a loaded machine.
    expect(Date.now() - t0).toBeLessThan(3000);
  });
  test("gives up past its size bound", async () => {
    expect(await readStdin(stream(["x".repeat(100)]), 1000, 10)).toBeUndefined();
  });
});

describe("editTargets", () => {
  test("is the file's absolute path in the room of the nearest directory holding .git (a worktree's .git file counts)", () => {
    const dir = mkdtempSync(join(tmpdir(), "airlock-root-"));
    try {
      mkdirSync(join(dir, "repo", ".git"), { recursive: true });
      mkdirSync(join(dir, "repo", "wt", "src"), { recursive: true });
      writeFileSync(join(dir, "repo", "wt", ".git"), "gitdir: ../.git/worktrees/wt\n");
      mkdirSync(join(dir, "repo", ".git", "worktrees", "wt"), { recursive: true });
      writeFileSync(join(dir, "repo", ".git", "worktrees", "wt", "commondir"), "../..\n");
      const repo = join(dir, "repo");
      expect(gitRoot(join(repo, "src", "a.ts"))).toBe(repo);
      expect(editTargets(join(repo, "src", "a.ts"), undefined)).toEqual([{ room: repo, path: join(repo, "src", "a.ts") }]);
      // A linked worktree kept inside its main worktree is one repository: checked in the worktree only.
      expect(editTargets(join(repo, "wt", "src", "a.ts"), undefined)).toEqual([{ room: join(repo, "wt"), path: join(repo, "wt", "src", "a.ts") }]);
      expect(editTargets("src/b.ts", repo)).toEqual([{ room: repo, path: join(repo, "src", "b.ts") }]);
      // A file in another repository than the hook's cwd is checked in that repository.
      expect(editTargets(join(repo, "src", "a.ts"), join(dir, "elsewhere"))).toEqual([{ room: repo, path: join(repo, "src", "a.ts") }]);
      // A repository nested in another's tree (or a submodule) is in both checkouts, innermost first.
      mkdirSync(join(repo, "vendor", "lib", ".git"), { recursive: true });
      expect(gitRoots(join(repo, "vendor", "lib", "x.ts"))).toEqual([join(repo, "vendor", "lib"), repo]);
      expect(editTargets(join(repo, "vendor", "lib", "x.ts"), undefined).map((e) => e.room)).toEqual([join(repo, "vendor", "lib"), repo]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  test("outside every repository it is checked in the cwd's room; outside cwd too, it is not checked", () => {
    const none = () => [];
    expect(editTargets("/w/p/x/y.ts", "/w/p", none)).toEqual([{ room: "/w/p", path: "/w/p/x/y.ts" }]);
    expect(editTargets("/elsewhere/y.ts", "/w/p", none)).toEqual([]);
    expect(editTargets("/w/p/..hidden/y.ts", "/w/p", none)).toEqual([{ room: "/w/p", path: "/w/p/..hidden/y.ts" }]);
  });
});

describe("othersSummary", () => {
  const snap: Snapshot = {
    source: "daemon",
    revision: 0,
    graph: { edges: [], deadlocks: [], would_deadlock: [] },
    journal: [],
    locks: [
      { name: "db", agent_id: "me", expires_in_seconds: 9, held_seconds: 1, fence: 1, queue_depth: 0, waiters: [] },
      { name: "npm", agent_id: "b", expires_in_seconds: 9, held_seconds: 4, fence: 2, queue_depth: 1, waiters: [] },
    ],
    agents: [],
    queues: [{ queue: "jobs", pending: 2, claimed: 1, done: 0, failed: 0, waiters: 0 }],
    events: [],
    notes: 0,
    counters: [],
    pools: [
      {
        pool: "heavy",
        capacity: 1,
        in_use: 1,
        offered: 0,
        queued: 1,
        version: 1,
        offer_seconds: 30,
        holders: [{ agent_id: "b", reason: "cargo test", weight: 1, held_seconds: 3 }],
        waiters: [{ agent_id: "me", weight: 1, waiting_seconds: 2, state: "queued", blocked: false }],
      },
    ],
    claims: [
      { room: "/other/repo", claims: [{ agent_id: "d", paths: ["x"], reason: "why", fence: 1, expires_in_seconds: 100 }] },
      { room: "github.com/org/here", claims: [{ agent_id: "c", paths: ["src/**"], fence: 1, expires_in_seconds: 100 }, { agent_id: "me", paths: ["lib/**"], fence: 2, expires_in_seconds: 100 }] },
    ],
  };
  test("lists what others hold, this repository's claims first, and shows the agent itself as `you`", () => {
    expect(othersSummary(snap, "me", "github.com/org/here")).toBe(
      [
        "What other agents hold right now:",
        "Locks:",
        "  npm — b (4s, 1 waiting)",
        "Slots:",
        "  heavy 1/1 — held by b (cargo test); in line: you",
        "Path claims:",
        "  c: src/**",
        "  d: x [room /other/repo] — why",
        "Task queues:",
        "  jobs: 2 pending, 1 claimed",
      ].join("\n"),
    );
  });
  test("stays one screen however many claims there are", () => {
    const many = { ...snap, claims: [{ room: "default", claims: Array.from({ length: 50 }, (_, i) => ({ agent_id: `a${i}`, paths: ["p"], fence: i, expires_in_seconds: 1 })) }] };
    const text = othersSummary(many, "me");
    expect(text).toContain("… and 42 more");
    expect(text.split("\n").length).toBeLessThan(25);
  });
});

describe("runHook", () => {
  test("an event the client has no hook for is allowed with a warning", async () => {
    const noStop = { ...claudeCode, events: ["pre-edit" as const] };
    const out = await runHook(noStop, "stop", "{}", { tool: async () => ({}), status: async () => ({}) as Snapshot });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("has no stop hook");
  });
});
