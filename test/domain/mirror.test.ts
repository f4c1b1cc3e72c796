// A shared store's catch-up applies only what changed (src/domain/mirror.ts): the path index
// follows rows that "another daemon" wrote (here, statements sent straight to the kernel's
// SQLite file, outside the domain) by putting the new and changed entries and dropping the gone
// ones, and leaves the rest alone. The counts say what a refresh did; the answers of check_paths
// say that memory is the rows.
import { expect, test } from "bun:test";
import { reconcile } from "../../src/domain/mirror.ts";
import type { Paths } from "../../src/domain/paths.ts";
import { useKernel } from "../helpers/kernel.ts";

const k = useKernel();
const R = "github.com/acme/app";
const refresh = <T>(p: { refresh(): Generator<unknown, T, unknown> }) => k.store.read(p.refresh() as never) as T;
const sql = (text: string, ...args: (string | number | null)[]) => k.store.db.query(text).run(...args);

test("reconcile puts what is new or changed, drops what is gone, and leaves the rest", () => {
  const memory = new Map([
    ["a", 1],
    ["b", 2],
    ["c", 3],
  ]);
  const puts: string[] = [];
  const drops: string[] = [];
  const r = reconcile(
    [
      ["a", 1],
      ["b", 20],
      ["d", 4],
    ] as [string, number][],
    memory,
    ([key]) => key,
    ([, v], m) => v === m,
    ([key]) => puts.push(key),
    (key) => drops.push(key),
  );
  expect(r).toEqual({ put: 2, dropped: 1 });
  expect(puts).toEqual(["b", "d"]);
  expect(drops).toEqual(["c"]);
});

test("the path index follows another writer's rows, recompiling only the claims that changed", async () => {
  const paths: Paths = k.kernel.paths;
  const claims = [];
  for (let a = 0; a < 20; a++) {
    const r = await paths.claim({ agentId: `agent-${a}`, paths: [`svc${a}/**`, `lib/${a}/*.ts`], room: R, ttlMs: 60_000 });
    if (!r.granted) throw new Error("expected a grant");
    claims.push(r);
  }
  // Nothing written by anyone else: the index is the rows already.
  expect(refresh(paths)).toEqual({ put: 0, dropped: 0 });

  const now = k.clock.now();
  sql("INSERT INTO path_claims (token, room, agent_id, paths, reason, fence, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", "elsewhere", R, "agent-x", JSON.stringify(["docs/**"]), null, 99, now, now + 60_000);
  sql("UPDATE path_claims SET expires_at = ? WHERE token = ?", now + 120_000, claims[3]!.token); // renewed elsewhere
  sql("DELETE FROM path_claims WHERE token = ?", claims[5]!.token); // released elsewhere
  expect(refresh(paths)).toEqual({ put: 2, dropped: 1 });

  const check = (p: string) => paths.check({ paths: [p], room: R, agentId: "checker" });
  expect((await check("docs/api.md")).conflicts.map((c) => c.heldBy)).toEqual(["agent-x"]);
  expect((await check("svc5/x.ts")).clear).toBe(true);
  const renewed = (await check("svc3/x.ts")).conflicts;
  expect(renewed.map((c) => [c.heldBy, c.expiresAt])).toEqual([["agent-3", now + 120_000]]);
  expect((await check("svc7/x.ts")).conflicts.map((c) => c.heldBy)).toEqual(["agent-7"]);
  expect(refresh(paths)).toEqual({ put: 0, dropped: 0 });
});

// The working trees follow the rows by deltas by horizon, which only PostgreSQL can read (their
// writers' transaction ids): test/store/pg-horizon.test.ts.
