// Real git repositories for the room tests: the real git binary, with no user or system config
// (an identity is passed on the command line), so a test sees what git itself writes.
import { mkdirSync } from "node:fs";

/** Runs the real git in `cwd`; throws with its stderr when it fails. */
export function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** A new repository at `dir` with one commit (worktrees and clones need one), and `origin` if given. */
export function gitRepo(dir: string, origin?: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q");
  git(dir, "commit", "-q", "--allow-empty", "-m", "first");
  if (origin) git(dir, "remote", "add", "origin", origin);
  return dir;
}
