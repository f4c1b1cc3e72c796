// The world a live session runs in, built the way a user's machine is: a temporary HOME, two git
// repositories under it (the project, and another one the user also works in), `airlock` and the clients on PATH,
// a real Airlock daemon on a port that is not the default one (its files in $HOME/.airlock, found
// by nothing but HOME), and a scripted model on loopback. Airlock's own configuration comes only
// from `airlock setup <client>` run in that world; the test writes only what a user of the client
// already had (the client's onboarding flag, its model provider) and never Airlock's config, a
// port, or any trust.
//
// Client processes run in their own process group with a hard timeout; the whole group (hooks,
// MCP helpers, Codex's native binary under its node wrapper) is killed when they end, so nothing
// outlives a test. Their environment is built from scratch: no AIRLOCK_* variable of the caller
// can leak in, and a dead proxy for every non-loopback address keeps them off the network.
import { test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { BUN, type DaemonProcess, ROOT, startDaemon } from "./daemon.ts";
import { type ModelRequest, type ModelServer, startModelServer, type ToolResult } from "./model-server.ts";
import { freePort } from "./until.ts";

export const CLAUDE_BIN = join(ROOT, "node_modules", ".bin", "claude");
export const CODEX_BIN = join(ROOT, "node_modules", ".bin", "codex");
export const GEMINI_BIN = join(ROOT, "node_modules", ".bin", "gemini");
export const COPILOT_BIN = join(ROOT, "node_modules", ".bin", "copilot");

/** One client run, however it ended. A hung client is killed after this long (it answers a scripted model in seconds). */
export const CLIENT_TIMEOUT_MS = 60_000;
/** A whole live file: a few client runs of a few seconds each, with room for a loaded 2-core machine. */
export const LIVE_FILE_TIMEOUT_MS = 240_000;

/**
 * `test` when the client's binary is installed; otherwise a skip that says so, except under CI,
 * where a missing client is a failure (the dev dependency is in the lockfile, so `npm ci` has it).
 */
export function liveTest(bin: string, what: string, install = "run npm install (it is a dev dependency)"): typeof test {
  if (existsSync(bin)) return test;
  const why = `${what} is missing (${bin}); ${install}`;
  if (process.env.CI === "true") {
    test(`${what} is installed`, () => {
      throw new Error(why);
    });
  } else console.log(`skipping the live ${what} sessions: ${why}`);
  return test.skip;
}

export interface RunResult {
  code: number | null;
  /** True when the run was killed by the timeout. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** stdout's JSON lines (stream-json / --json), the others dropped. */
  events: any[];
  ms: number;
}

/** Runs a command in its own process group, bounded by a timeout; the group is killed afterwards. */
export async function runBounded(cmd: string[], o: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<RunResult> {
  const started = performance.now();
  const proc = Bun.spawn(cmd, { cwd: o.cwd, env: o.env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  const killGroup = () => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, o.timeoutMs ?? CLIENT_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  killGroup(); // whatever the client left behind (a hook, an MCP helper)
  const events = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
  return { code, timedOut, stdout, stderr, events, ms: Math.round(performance.now() - started) };
}

export interface LiveWorld {
  root: string;
  /** The user's HOME. */
  home: string;
  /** The project: a git repository with src/locked.ts, lib/free.ts and docs/readme.md committed. */
  repo: string;
  /** Another repository of the user's with the same layout. */
  otherRepo: string;
  /** The folder on PATH that holds `airlock`. */
  binDir: string;
  daemon: DaemonProcess;
  model: ModelServer;
  /** The environment of the user's shell: PATH (with airlock), HOME, locale, nothing of Airlock's. */
  userEnv(extra?: Record<string, string>): Record<string, string>;
  /** `airlock ARGS` as the user types it in `cwd` (the PATH entry, the user's environment). */
  airlock(args: string[], cwd?: string): Promise<RunResult>;
  read(rel: string, repo?: string): string;
  close(): Promise<void>;
}

/** What each repository holds at the start (relative path → content). */
export const FILES: Record<string, string> = {
  "src/locked.ts": "export const locked = 1;\n",
  "lib/free.ts": "export const free = 1;\n",
  "docs/readme.md": "# Readme\n\nold line\n",
};

function git(cwd: string, ...args: string[]): void {
  const r = Bun.spawnSync(["git", "-c", "user.name=Live Test", "-c", "user.email=live@example.invalid", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${r.stderr.toString()}`);
}

function makeRepo(dir: string): void {
  for (const [rel, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  git(dir, "init", "-q");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "initial");
}

/**
 * What a user has on PATH: `airlock` (the compiled binary under test, AIRLOCK_BIN, else the source
 * run by bun) and the clients themselves (setup looks for `codex` to record its hook trust, and
 * for `claude`; `gemini` is one of the signs it detects Gemini CLI by), whatever the caller's PATH holds (`.ci/run` calls bun directly, without npm's
 * node_modules/.bin).
 */
function installBins(binDir: string): void {
  mkdirSync(binDir, { recursive: true });
  const bin = process.env.AIRLOCK_BIN;
  if (bin) symlinkSync(resolve(bin), join(binDir, "airlock"));
  else writeFileSync(join(binDir, "airlock"), `#!/bin/sh\nexec '${BUN}' '${join(ROOT, "src", "main.ts")}' "$@"\n`, { mode: 0o755 });
  for (const client of [CLAUDE_BIN, CODEX_BIN, GEMINI_BIN]) if (existsSync(client)) symlinkSync(client, join(binDir, basename(client)));
}

/** Everything but loopback goes to a proxy that is not there: a client that tries the network fails at once. */
const OFFLINE: Record<string, string> = {
  HTTPS_PROXY: "http://127.0.0.1:9",
  HTTP_PROXY: "http://127.0.0.1:9",
  ALL_PROXY: "http://127.0.0.1:9",
  https_proxy: "http://127.0.0.1:9",
  http_proxy: "http://127.0.0.1:9",
  all_proxy: "http://127.0.0.1:9",
  NO_PROXY: "127.0.0.1,localhost,::1",
  no_proxy: "127.0.0.1,localhost,::1",
};

export async function startWorld(): Promise<LiveWorld> {
  // realpath: macOS's /var → /private/var would otherwise give two spellings of one repository.
  const root = realpathSync(mkdtempSync(join(tmpdir(), "airlock-live-")));
  const home = join(root, "home");
  const repo = join(home, "code", "app");
  const otherRepo = join(home, "code", "other");
  const binDir = join(root, "bin");
  mkdirSync(home, { recursive: true });
  makeRepo(repo);
  makeRepo(otherRepo);
  installBins(binDir);
  const model = startModelServer();
  // A port other than 27183, and nothing but HOME tells anyone where the daemon's files are.
  const daemon = await startDaemon({ home: join(home, ".airlock"), port: freePort(), env: { HOME: home, AIRLOCK_HOME: undefined } });
  const userEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
    PATH: `${binDir}:${process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"}`,
    HOME: home,
    USER: process.env.USER ?? "live",
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ...OFFLINE,
    ...extra,
  });
  return {
    root,
    home,
    repo,
    otherRepo,
    binDir,
    daemon,
    model,
    userEnv,
    airlock: (args, cwd = home) => runBounded(["airlock", ...args], { cwd, env: userEnv(), timeoutMs: 60_000 }),
    read: (rel, r = repo) => readFileSync(join(r, rel), "utf8"),
    async close() {
      await daemon.kill();
      await model.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The Airlock agent id a session-start hook gave the model (`<client>:<session>`), if any reached it. */
export function agentIdIn(text: string, client: string): string | undefined {
  const re = new RegExp(`\\b(${client.replace(/[-]/g, "\\-")}:[0-9a-f][0-9a-f-]{7,})\\b`);
  return re.exec(text)?.[1];
}

/** Every tool result of a session once (each request resends the history), in call order. */
export function allResults(requests: ModelRequest[]): ToolResult[] {
  const byId = new Map<string, ToolResult>();
  for (const r of requests) for (const x of r.results) byId.set(x.id, x);
  return [...byId.values()];
}

/**
 * True when `needle` is in a text item that comes after every model turn of the history a
 * request carries: something the client injected afresh for this turn (a SessionStart context on
 * resume), not a copy kept from an earlier one.
 */
export function injectedAfterHistory(r: ModelRequest, needle: string): boolean {
  const lastModel = r.items.findLastIndex((it) => it.kind === "call" || (it.kind === "text" && it.role === "assistant"));
  return r.items.some((it, i) => i > lastModel && it.kind === "text" && it.text.includes(needle));
}
