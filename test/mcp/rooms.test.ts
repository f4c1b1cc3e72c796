// A room is a repository (SPEC §6), through the path tools over the HTTP layer, on real git
// repositories: clones of one origin share a room, two repositories never do, a worktree of a
// repository without origin shares its main worktree's room, a directory outside any repository
// is a room of its own, a directory the daemon cannot read stays a plain name, and paths are
// relative to the top level of the checkout the room's directory is in.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RoomResolver } from "../../src/mcp/tools/rooms.ts";
import { git, gitRepo } from "../helpers/git.ts";
import { makeApp } from "./rpc.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "airlock-rooms-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const upstream = gitRepo(join(base, "upstream"), "git@github.com:org/app.git");
const clone1 = join(base, "clone-1");
const clone2 = join(base, "clone-2");
git(base, "clone", "-q", upstream, clone1);
git(clone1, "remote", "set-url", "origin", "https://github.com/org/app.git");
git(base, "clone", "-q", upstream, clone2);
git(clone2, "remote", "set-url", "origin", "ssh://git@GitHub.com/org/app");
const other = gitRepo(join(base, "other"), "git@github.com:org/other.git");
const local = gitRepo(join(base, "local"));
const localWt = join(base, "local-wt");
git(local, "worktree", "add", "-q", localWt);
mkdirSync(join(clone1, "src", "api"), { recursive: true });
const plain = join(base, "plain");
mkdirSync(plain);

describe("claims in a repository's room", () => {
  test("clones of one origin share the room; the answer names it", async () => {
    const t = await makeApp();
    const a = await t.call("claim_paths", { agent_id: "A", room: clone1, paths: ["src/**"] });
    expect(a).toMatchObject({ granted: true, room: "github.com/org/app", paths: ["src/**"] });
    const b = await t.call("claim_paths", { agent_id: "B", room: clone2, paths: ["src/index.ts"] });
    expect(b).toMatchObject({ granted: false, room: "github.com/org/app", conflicts: [{ held_by: "A", held_path: "src/**", witness: "src/index.ts" }] });
    expect(await t.call("check_paths", { agent_id: "B", room: upstream, paths: [join(upstream, "src/x.ts")] })).toMatchObject({
      clear: false,
      room: "github.com/org/app",
    });
  });

  test("two repositories never share a room", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { agent_id: "A", room: clone1, paths: ["src/**"] });
    expect(await t.call("check_paths", { agent_id: "B", room: other, paths: ["src/index.ts"] })).toEqual({
      clear: true,
      room: "github.com/org/other",
      conflicts: [],
    });
    expect(await t.call("check_paths", { agent_id: "B", room: local, paths: ["src/index.ts"] })).toEqual({ clear: true, room: local, conflicts: [] });
  });

  test("a worktree of a repository without origin shares its main worktree's room", async () => {
    const t = await makeApp();
    const a = await t.call("claim_paths", { agent_id: "A", room: localWt, paths: [join(localWt, "lib/a.ts")] });
    expect(a).toMatchObject({ granted: true, room: local, paths: ["lib/a.ts"] });
    expect(await t.call("check_paths", { agent_id: "B", room: local, paths: ["lib/a.ts"] })).toMatchObject({ clear: false, room: local });
  });

  test("from a subdirectory, paths are relative to the checkout's top level", async () => {
    const t = await makeApp();
    const a = await t.call("claim_paths", { agent_id: "A", room: join(clone1, "src", "api"), paths: ["src/api/**", join(clone1, "docs/api.md")] });
    expect(a).toMatchObject({ granted: true, room: "github.com/org/app", paths: ["src/api/**", "docs/api.md"] });
  });

  test("with no room, an absolute path names its repository", async () => {
    const t = await makeApp();
    const a = await t.call("claim_paths", { agent_id: "A", paths: [join(clone2, "src/api/**"), "README.md"] });
    expect(a).toMatchObject({ granted: true, room: "github.com/org/app", paths: ["src/api/**", "README.md"] });
    expect(await t.callError("claim_paths", { agent_id: "A", paths: [join(plain, "x.ts")] })).toContain("in no repository");
  });

  test("an absolute path outside the room's checkout is refused, naming the room", async () => {
    const t = await makeApp();
    const e = await t.callError("claim_paths", { agent_id: "A", room: clone1, paths: [join(other, "src/x.ts")] });
    expect(e).toContain(`outside the checkout ${clone1}`);
    expect(e).toContain('room "github.com/org/app"');
    expect(await t.call("list_path_claims", {})).toEqual([]);
  });

  test("a path through a symlink to the checkout is inside it", async () => {
    const t = await makeApp();
    const link = join(base, "link-to-clone1");
    symlinkSync(clone1, link);
    const a = await t.call("claim_paths", { agent_id: "A", room: join(link, "src"), paths: [join(link, "src/a.ts")] });
    expect(a).toMatchObject({ granted: true, room: "github.com/org/app", paths: ["src/a.ts"] });
  });
});

describe("rooms that are not repositories", () => {
  test("a directory outside any repository is a room of its own", async () => {
    const t = await makeApp();
    const a = await t.call("claim_paths", { agent_id: "A", room: plain, paths: [join(plain, "x/y.ts")] });
    expect(a).toMatchObject({ granted: true, room: plain, paths: ["x/y.ts"] });
  });

  test("a directory the daemon cannot read stays a plain name, and its absolute paths are relative to it", async () => {
    const t = await makeApp();
    const sandbox = "/nonexistent-sandbox/work/repo";
    const a = await t.call("claim_paths", { agent_id: "A", room: sandbox, paths: [`${sandbox}/src/**`] });
    expect(a).toMatchObject({ granted: true, room: sandbox, paths: ["src/**"] });
  });

  test("named rooms, default included, keep working as they were; a roomless claim is warned", async () => {
    const t = await makeApp();
    const a = await t.call("claim_paths", { agent_id: "A", paths: ["src/**"] });
    expect(a).toMatchObject({ granted: true, room: "default" });
    expect(a.warning).toContain("no room given: this claim is in the room `default`");
    expect(await t.call("check_paths", { agent_id: "B", paths: ["src/x.ts"] })).toMatchObject({ clear: false, room: "default" });
    expect(await t.call("list_path_claims", { room: "default" })).toMatchObject([{ agent_id: "A", room: "default" }]);
    // A named room is given on purpose: no warning, and its check covers that room only.
    const n = await t.call("claim_paths", { agent_id: "A", room: "seed", paths: ["lib/**"] });
    expect(n.warning).toBeUndefined();
    expect(await t.call("check_paths", { agent_id: "B", room: "seed", paths: ["src/x.ts"] })).toEqual({ clear: true, room: "seed", conflicts: [] });
  });

  test("a directory's check also covers `default` with the top-level-relative paths, naming the room of the conflict", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { agent_id: "A", paths: ["src/**"] });
    const r = await t.call("check_paths", { agent_id: "B", room: join(clone1, "src"), paths: [join(clone1, "src/x.ts")] });
    expect(r).toMatchObject({ clear: false, room: "github.com/org/app", conflicts: [{ room: "default", path: "src/x.ts", held_by: "A", held_path: "src/**" }] });
    // So do a directory outside any repository, and one the daemon cannot read (absolute paths made relative to it).
    expect(await t.call("check_paths", { agent_id: "B", room: plain, paths: ["src/y.ts"] })).toMatchObject({ clear: false, room: plain });
    const sandbox = "/nonexistent-sandbox/work/repo";
    expect(await t.call("check_paths", { agent_id: "B", room: sandbox, paths: [`${sandbox}/src/y.ts`] })).toMatchObject({
      clear: false,
      room: sandbox,
      conflicts: [{ room: "default", witness: "src/y.ts" }],
    });
    // The holder's own claim there never counts, and a claim in the repository's room itself names no room.
    expect(await t.call("check_paths", { agent_id: "A", room: clone1, paths: ["src/x.ts"] })).toMatchObject({ clear: true });
    await t.call("claim_paths", { agent_id: "C", room: clone2, paths: ["src/x.ts"] });
    const both = await t.call("check_paths", { agent_id: "B", room: clone1, paths: ["src/x.ts"] });
    expect(both.conflicts.map((c: { held_by: string; room?: string }) => [c.held_by, c.room])).toEqual([["C", undefined], ["A", "default"]]);
  });

  test("a claim in a repository's room is granted over a claim in its aliases, with a warning naming it", async () => {
    const t = await makeApp();
    await t.call("claim_paths", { agent_id: "A", paths: ["src/**"] });
    const c = await t.call("claim_paths", { agent_id: "B", room: clone1, paths: ["src/x.ts"] });
    expect(c).toMatchObject({ granted: true, room: "github.com/org/app" });
    expect(c.warning).toContain("A's src/** [room default] (both match src/x.ts;");
    expect((await t.call("claim_paths", { agent_id: "B", room: clone1, paths: ["docs/**"] })).warning).toBeUndefined();
  });
});

describe("listing and forced release by directory", () => {
  test("list_path_claims and force_release_paths take a working directory as room", async () => {
    const t = await makeApp();
    await t.call("register_agent", { agent_id: "lead", role: "lead" });
    await t.call("claim_paths", { agent_id: "A", room: clone1, paths: ["src/**"] });
    await t.call("claim_paths", { agent_id: "A", room: other, paths: ["src/**"] });
    expect(await t.call("list_path_claims", { room: clone2 })).toMatchObject([{ agent_id: "A", room: "github.com/org/app", paths: ["src/**"] }]);
    const r = await t.call("force_release_paths", { agent_id: "lead", holder: "A", room: clone2, paths: [join(clone2, "src/**")], reason: "stuck" });
    expect(r).toEqual({ released: 1, room: "github.com/org/app" });
    expect((await t.call("list_path_claims", {})).map((c: { room: string }) => c.room)).toEqual(["github.com/org/other"]);
  });
});

describe("RoomResolver", () => {
  test("remembers a directory's room for its cache time, then reads again", async () => {
    const dir = gitRepo(join(base, "cached"));
    const r = new RoomResolver(60_000);
    expect(r.dir(dir)?.room).toBe(dir);
    git(dir, "remote", "add", "origin", "git@example.com:x/cached.git");
    expect(r.dir(dir)?.room).toBe(dir); // cached
    expect(new RoomResolver(0).dir(dir)?.room).toBe("example.com/x/cached");
  });

  test("names the rooms a directory's paths may also be claimed in: the repository's older names, then default", () => {
    const r = new RoomResolver(0);
    // With origin: the main worktree's path (its room before it had one).
    expect(r.resolve(upstream, ["a.ts"])).toEqual({ room: "github.com/org/app", paths: ["a.ts"], also: [upstream, "default"] });
    // A linked worktree of a repository without origin: its own top level (a hand-typed room of old).
    expect(r.resolve(localWt, ["a.ts"]).also).toEqual([localWt, "default"]);
    expect(r.resolve(local, ["a.ts"]).also).toEqual(["default"]);
    expect(r.resolve(plain, ["a.ts"]).also).toEqual(["default"]);
    expect(r.resolve(undefined, [join(clone1, "a.ts")]).also).toEqual([clone1, "default"]);
    expect(r.resolve("seed", ["a.ts"]).also).toEqual([]);
    expect(r.resolve(undefined, ["a.ts"])).toEqual({ room: "default", paths: ["a.ts"], also: [] });
  });
});
