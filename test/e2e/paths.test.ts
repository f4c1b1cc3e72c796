// Path claims end to end, against a real daemon process over real HTTP: the seed's refusal log
// (codex refused src/api/** held by claude, then granted src/web/**), a race of 20 overlapping
// claimers with exactly one winner, a blocking claim granted on release, a lead's forced
// release, and claims surviving kill -9 and a restart.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { storeQuery, useDaemon, useDaemonStarter } from "../helpers/daemon.ts";
import { track, until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const start = useDaemonStarter();

/** The journal's path entries, read straight from the daemon's database (WAL allows a reader). */
async function pathJournal(db: string, room: string) {
  const rows = await storeQuery<{ kind: string; agent_id: string; data: string }>(
    db,
    "SELECT kind, agent_id, data FROM journal WHERE kind LIKE 'path.%' AND resource = ? ORDER BY revision",
    room,
  );
  return rows.map((r) => ({ kind: r.kind, agent: r.agent_id, data: JSON.parse(r.data) }));
}

describe("the seed story", () => {
  test("codex is refused src/api/** held by claude with a witness, re-scopes to src/web/** and is granted; the journal shows it", async () => {
    const room = "seed";
    const claude = await d.call("claim_paths", { agent_id: "claude", paths: ["src/api/**"], room, reason: "auth refactor" });
    expect(claude).toMatchObject({ granted: true, room, paths: ["src/api/**"], fence: 1, expires_in_seconds: 900 });
    expect(claude.claim_token).toMatch(/^[0-9a-f]{32}$/);

    const refused = await d.call("claim_paths", { agent_id: "codex", paths: ["src/api/**"], room });
    expect(refused).toEqual({
      granted: false,
      room,
      conflicts: [
        { path: "src/api/**", held_by: "claude", held_path: "src/api/**", witness: expect.stringMatching(/^src\/api/), reason: "auth refactor", expires_in_seconds: 900 },
      ],
    });
    const web = await d.call("claim_paths", { agent_id: "codex", paths: ["src/web/**"], room });
    expect(web).toMatchObject({ granted: true, paths: ["src/web/**"], fence: 2 });

    expect(await d.call("list_path_claims", { room })).toEqual([
      { agent_id: "claude", room, paths: ["src/api/**"], reason: "auth refactor", fence: 1, expires_in_seconds: 900 },
      { agent_id: "codex", room, paths: ["src/web/**"], fence: 2, expires_in_seconds: 900 },
    ]);
    expect(await d.call("check_paths", { paths: ["src/web/app.tsx"], room, agent_id: "codex" })).toEqual({ clear: true, room, conflicts: [] });
    expect(await d.call("check_paths", { paths: ["src/web/app.tsx"], room, agent_id: "claude" })).toMatchObject({
      clear: false,
      conflicts: [{ held_by: "codex", held_path: "src/web/**", witness: "src/web/app.tsx" }],
    });

    const log = await pathJournal(d.db, room);
    expect(log.map((e) => [e.kind, e.agent, e.data.paths])).toEqual([
      ["path.granted", "claude", ["src/api/**"]],
      ["path.denied", "codex", ["src/api/**"]],
      ["path.granted", "codex", ["src/web/**"]],
    ]);
    expect(log[1]!.data).toMatchObject({ held_by: ["claude"], conflicts: [{ held_path: "src/api/**" }] });
    expect(log[2]!.data.ttl_seconds).toBe(900);
  });

  test("a .. path is refused with an error and changes nothing", async () => {
    const r = await d.call("claim_paths", { agent_id: "A", paths: ["src/../../etc"], room: "dots" });
    expect(r.isError).toBe(true);
    expect(r.error).toContain('".."');
    expect(await d.call("list_path_claims", { room: "dots" })).toEqual([]);
  });
});

describe("races and waits", () => {
  test("20 concurrent overlapping claimers: exactly one wins", async () => {
    // Every pair of these overlaps (each matches lib/m.ts).
    const SHAPES = ["lib/**", "lib/*.ts", "lib/m.ts", "lib/{m,n}.ts", "**/m.ts"];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => d.call("claim_paths", { agent_id: `racer-${i}`, paths: [SHAPES[i % SHAPES.length]!], room: "race" })),
    );
    expect(results.filter((r) => r.granted === true)).toHaveLength(1);
    expect(results.filter((r) => r.granted === false)).toHaveLength(19);
    expect(await d.call("list_path_claims", { room: "race" })).toHaveLength(1);
  });

  test("a blocking claim is granted the moment the holder releases", async () => {
    const a = await d.call("claim_paths", { agent_id: "A", paths: ["src/**"], room: "block" });
    const b = track(d.call("claim_paths", { agent_id: "B", paths: ["src/x.ts"], room: "block", wait_seconds: 20 }));
    await until("B's claim blocked behind A's", async () => {
      const s = (await d.rpc("airlock/status")).result as { graph: { edges: { agent_id: string; kind: string; blocked: boolean }[] } };
      return s.graph.edges.some((e) => e.agent_id === "B" && e.kind === "path" && e.blocked);
    });
    expect(b.settled()).toBe(false);
    expect(await d.call("release_paths", { claim_token: a.claim_token })).toEqual({ released: true });
    const got = await b.promise;
    expect(got).toMatchObject({ granted: true, paths: ["src/x.ts"] });
    expect(await d.call("release_paths", { claim_token: a.claim_token })).toEqual({ released: false });
    expect(await d.call("renew_paths", { claim_token: got.claim_token, ttl_seconds: 60 })).toEqual({ renewed: true, expires_in_seconds: 60 });
    expect(await d.call("renew_paths", { claim_token: a.claim_token })).toEqual({ renewed: false, error: "store: claim not found" });
  });

  test("only a lead may force-release another agent's claims", async () => {
    await d.call("register_agent", { agent_id: "lead-1", role: "lead" });
    await d.call("register_agent", { agent_id: "dev-1" });
    await d.call("claim_paths", { agent_id: "stuck", paths: ["app/**"], room: "force" });
    const no = await d.call("force_release_paths", { agent_id: "dev-1", holder: "stuck", room: "force", reason: "mine now" });
    expect(no.isError).toBe(true);
    expect(no.error).toContain('role "lead"');
    expect(await d.call("force_release_paths", { agent_id: "lead-1", holder: "stuck", room: "force", reason: "stuck for an hour" })).toEqual({ released: 1, room: "force" });
    expect(await d.call("list_path_claims", { room: "force" })).toEqual([]);
    expect((await pathJournal(d.db, "force")).at(-1)).toMatchObject({ kind: "path.force_released", agent: "lead-1", data: { holder: "stuck" } });
  });
});

describe("restart", () => {
  test("claims survive kill -9 and a restart on the same database", async () => {
    const first = await start();
    const a = await first.call("claim_paths", { agent_id: "A", paths: ["src/api/**"], room: "r" });
    expect(a.granted).toBe(true);
    await first.kill(9);

    const again = await start({ home: first.home, db: first.db });
    expect(await again.call("list_path_claims", { room: "r" })).toMatchObject([{ agent_id: "A", paths: ["src/api/**"], fence: 1 }]);
    expect(await again.call("claim_paths", { agent_id: "B", paths: ["src/api/x.ts"], room: "r" })).toMatchObject({ granted: false });
    expect(await again.call("release_paths", { claim_token: a.claim_token })).toEqual({ released: true });
    const b = await again.call("claim_paths", { agent_id: "B", paths: ["src/api/x.ts"], room: "r" });
    expect(b).toMatchObject({ granted: true, fence: 2 });
  });
});
