// Reading a checkout from git's own files, on real repositories made by the real git (init,
// remote add, worktree add, clone, submodule), and the remote URL normal form.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkoutTop, checkoutTops, normalizeRemoteUrl, parseGitConfig, readCheckout } from "../../src/machine/repo.ts";
import { git, gitRepo as repo } from "../helpers/git.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "airlock-repo-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("normalizeRemoteUrl", () => {
  test("every spelling of one remote is one string", () => {
    const one = [
      "https://github.com/org/repo.git",
      "https://github.com/org/repo",
      "https://github.com/org/repo/",
      "https://user:secret@GitHub.com/org/repo.git",
      "http://github.com:80/org/repo",
      "git@github.com:org/repo",
      "git@github.com:org/repo.git",
      "github.com:org/repo.git/",
      "ssh://git@github.com/org/repo.git",
      "ssh://git@github.com:22/org/repo",
      "git+ssh://git@GITHUB.COM/org/repo.git",
      "git://github.com/org//repo.git",
      "  https://github.com/org/repo.git  ",
    ];
    for (const u of one) expect(normalizeRemoteUrl(u)).toBe("github.com/org/repo");
  });

  test("repositories that differ stay apart: path case, another owner, another host", () => {
    expect(normalizeRemoteUrl("git@github.com:org/Repo.git")).toBe("github.com/org/Repo");
    expect(normalizeRemoteUrl("git@github.com:other/repo.git")).toBe("github.com/other/repo");
    expect(normalizeRemoteUrl("https://gitlab.com/group/sub/repo.git")).toBe("gitlab.com/group/sub/repo");
  });

  test("a local remote is an absolute path, resolved against the checkout", () => {
    expect(normalizeRemoteUrl("/srv/git/repo", "/w")).toBe("/srv/git/repo");
    expect(normalizeRemoteUrl("/srv/git/repo/.git/", "/w")).toBe("/srv/git/repo");
    expect(normalizeRemoteUrl("/srv/git/repo.git", "/w")).toBe("/srv/git/repo.git"); // a directory's real name
    expect(normalizeRemoteUrl("file:///srv/git/repo", "/w")).toBe("/srv/git/repo");
    expect(normalizeRemoteUrl("../up/repo", "/w/me")).toBe("/w/up/repo");
  });
});

describe("parseGitConfig", () => {
  test("reads sections, quoted subsections, spaces, quotes, escapes, comments and continuations", () => {
    const c = parseGitConfig(
      [
        "# a comment",
        "[core]",
        "\tbare = false",
        "\tfilemode",
        '[remote "origin"]',
        "\turl = git@github.com:org/repo.git ; trailing comment",
        "\tfetch = +refs/heads/*:refs/remotes/origin/*",
        '[Remote "Odd \\"name\\""]',
        '\tURL = "  spaced value # not a comment" tail',
        "[remote.Old]",
        "\turl = a\\",
        "b",
        "[branch \"main\"] remote = origin",
      ].join("\n"),
    );
    expect(c.get("remote.origin.url")).toEqual(["git@github.com:org/repo.git"]);
    expect(c.get("core.filemode")).toEqual(["true"]);
    expect(c.get('remote.Odd "name".url')).toEqual(["  spaced value # not a comment tail"]);
    expect(c.get("remote.old.url")).toEqual(["ab"]);
    expect(c.get("branch.main.remote")).toEqual(["origin"]);
    expect(c.get("remote.ORIGIN.url")).toBeUndefined(); // subsections are case-sensitive
  });
});

describe("readCheckout on real repositories", () => {
  test("a repository with origin: its top level and normalized URL, from a subdirectory too", () => {
    const r = repo(join(base, "with-origin"), "https://github.com/Org/App.git");
    mkdirSync(join(r, "src", "api"), { recursive: true });
    expect(readCheckout(r)).toEqual({ top: r, commonDir: join(r, ".git"), main: r, origin: "github.com/Org/App" });
    expect(readCheckout(join(r, "src", "api"))?.top).toBe(r);
  });

  test("a linked worktree finds the shared git directory: origin, and the main worktree", () => {
    const r = repo(join(base, "no-origin"));
    const wt = join(base, "no-origin-wt");
    git(r, "worktree", "add", "-q", wt);
    expect(readCheckout(wt)).toEqual({ top: wt, commonDir: join(r, ".git"), main: r });
    git(r, "remote", "add", "origin", "git@github.com:org/later.git");
    expect(readCheckout(wt)?.origin).toBe("github.com/org/later");
  });

  test("clones of one local repository name the same origin, which is that repository's path", () => {
    const up = repo(join(base, "upstream"));
    git(base, "clone", "-q", up, join(base, "clone-1"));
    git(base, "clone", "-q", `file://${up}`, join(base, "clone-2"));
    expect(readCheckout(join(base, "clone-1"))?.origin).toBe(up);
    expect(readCheckout(join(base, "clone-2"))?.origin).toBe(up);
    expect(readCheckout(up)).toEqual({ top: up, commonDir: join(up, ".git"), main: up });
  });

  test("a submodule is a checkout of its own, with its own origin and main worktree", () => {
    const lib = repo(join(base, "lib"));
    const sup = repo(join(base, "super"));
    git(sup, "submodule", "add", "-q", lib, "vendor/lib");
    const sub = join(sup, "vendor", "lib");
    expect(readCheckout(sub)).toMatchObject({ top: sub, main: sub, origin: lib });
    expect(readCheckout(sup)?.top).toBe(sup);
  });

  test("outside any repository there is no checkout; a .git that is not git's leaves it outside", () => {
    const plain = join(base, "plain", "deep");
    mkdirSync(plain, { recursive: true });
    expect(checkoutTop(plain)).toBeUndefined();
    expect(readCheckout(plain)).toBeUndefined();
    const odd = join(base, "odd");
    mkdirSync(odd);
    writeFileSync(join(odd, ".git"), "not a gitdir line\n");
    expect(readCheckout(odd)).toBeUndefined();
  });

  test("a .git directory with no config is a repository without origin", () => {
    const bare = join(base, "hand-made");
    mkdirSync(join(bare, ".git"), { recursive: true });
    expect(readCheckout(bare)).toEqual({ top: bare, commonDir: join(bare, ".git"), main: bare });
  });

  test("a symlink into a repository finds it (the caller resolves it to compare paths)", () => {
    const r = repo(join(base, "linked-target"));
    symlinkSync(r, join(base, "link"));
    expect(readCheckout(join(base, "link"))?.top).toBe(join(base, "link"));
    expect(readCheckout(realpathSync(join(base, "link")))?.top).toBe(r);
  });
});

describe("checkoutTops", () => {
  test("lists every checkout a directory is in, innermost first: a submodule is in its parent's too", () => {
    const lib = repo(join(base, "tops-lib"));
    const parent = repo(join(base, "tops-parent"));
    git(parent, "submodule", "add", "-q", lib, "vendor/lib");
    mkdirSync(join(parent, "vendor", "lib", "src"), { recursive: true });
    expect(checkoutTops(join(parent, "vendor", "lib", "src"))).toEqual([join(parent, "vendor", "lib"), parent]);
    expect(checkoutTop(join(parent, "vendor", "lib", "src"))).toBe(join(parent, "vendor", "lib"));
    expect(checkoutTops(join(parent, "vendor"))).toEqual([parent]);
    expect(readCheckout(join(parent, "vendor", "lib"))?.commonDir).toBe(join(parent, ".git", "modules", "vendor", "lib"));
  });
});
