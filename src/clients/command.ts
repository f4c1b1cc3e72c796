// How a hook (or a client's config) invokes airlock, and the proof that it runs. A hook command
// is written once and run by the client for months: it must resolve for this user, survive an
// upgrade, and never put one user's absolute path into a file a project commits.
// - `airlock` when PATH finds this very program (the name survives every upgrade);
// - else the compiled binary by a stable path: a Homebrew `…/Cellar/<name>/<version>/bin/<name>`
//   (which `brew cleanup` deletes) becomes `<prefix>/bin/<name>` or `<prefix>/opt/<name>/bin/<name>`;
// - from source (`bun src/main.ts`), with no `airlock` on PATH: bun and src/main.ts by their
//   absolute paths, so the user scope runs this checkout;
// - in a project-scoped file (`--project`): always the bare `airlock`, which every teammate has.
// `verifyCommand` runs `<cmd> version` through `sh -c`, the way clients run hook commands.
// PATH entries inside a node_modules/.bin are not the client's: npx (`npx airlock setup …`, the
// README's way from source) and npm scripts put them first, but the client later runs the hook
// with the user's own PATH. So `which` ignores them, and the check runs without them.
import { existsSync, realpathSync } from "node:fs";
import { basename } from "node:path";
import { shellQuote } from "../shell.ts";

export interface CommandProbe {
  /** process.execPath: the compiled binary, or bun when running from source. */
  execPath: string;
  /** Bun.main: the entry script (src/main.ts from source). */
  main: string;
  /** A project-scoped file: never a user's absolute path. */
  project: boolean;
  which(name: string): string | null;
  realpath(p: string): string;
  exists(p: string): boolean;
}

const safeRealpath = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** Is this PATH entry a package manager's `…/node_modules/.bin` (npx, npm run, bunx)? */
const isNodeModulesBin = (dir: string) => /(^|\/)node_modules\/\.bin\/?$/.test(dir);

/** PATH as the client will have it: without the node_modules/.bin entries npx and npm add. */
export function clientPath(path = process.env.PATH ?? ""): string {
  return path
    .split(":")
    .filter((d) => d !== "" && !isNodeModulesBin(d))
    .join(":");
}

/** The environment a client runs hooks with: this one, with PATH as clientPath makes it. */
export function clientEnv(env: Record<string, string | undefined> = process.env): Record<string, string | undefined> {
  return { ...env, PATH: clientPath(env.PATH ?? "") };
}

export function isBun(execPath: string): boolean {
  const name = basename(execPath);
  return name === "bun" || name === "bun.exe" || name.startsWith("bun-");
}

/** `<prefix>/Cellar/<name>/<version>/bin/<exe>` → the links Homebrew keeps across versions. */
export function stableBrewPath(path: string, exists: (p: string) => boolean = existsSync): string | undefined {
  const m = /^(.*)\/Cellar\/([^/]+)\/[^/]+\/bin\/([^/]+)$/.exec(path);
  if (!m) return undefined;
  const [, prefix, formula, exe] = m;
  const candidates = [`${prefix}/bin/${exe}`, `${prefix}/opt/${formula}/bin/${exe}`];
  return candidates.find(exists) ?? candidates[1];
}

/** The program and its leading arguments that run airlock (see the header): for a config's `command` + `args`. */
export function airlockArgv(o: Partial<CommandProbe> = {}): string[] {
  const p: CommandProbe = {
    execPath: process.execPath,
    main: Bun.main,
    project: false,
    which: (n) => Bun.which(n, { PATH: clientPath() }),
    realpath: safeRealpath,
    exists: existsSync,
    ...o,
  };
  if (p.project) return ["airlock"];
  const fromSource = isBun(p.execPath);
  const self = p.realpath(fromSource ? p.main : p.execPath);
  const onPath = p.which("airlock");
  if (onPath && p.realpath(onPath) === self) return ["airlock"];
  const exe = stableBrewPath(p.execPath, p.exists) ?? p.execPath;
  return fromSource ? [exe, p.main] : [exe];
}

/** The command that runs airlock, as one shell string (see the header). */
export function airlockCommand(o: Partial<CommandProbe> = {}): string {
  return airlockArgv(o).map(shellQuote).join(" ");
}

export interface CommandCheck {
  ok: boolean;
  /** What `<cmd> version` printed (stdout, else stderr), trimmed to one line. */
  output: string;
}

/** How long `<cmd> version` may take: a cold compiled binary starts in well under a second. */
const VERSION_TIMEOUT_MS = 15_000;

/** Runs `<cmd> version` through `sh -c`, as a client runs a hook command (PATH as clientPath makes it). */
export function verifyCommand(cmd: string, env: Record<string, string | undefined> = process.env): CommandCheck {
  const r = Bun.spawnSync(["/bin/sh", "-c", `${cmd} version`], { env: clientEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: VERSION_TIMEOUT_MS });
  const out = r.stdout.toString().trim();
  const err = r.stderr.toString().trim();
  const ok = r.exitCode === 0 && /^airlock \S+/.test(out);
  const line = (ok ? out : err || out || `exit ${r.exitCode ?? "killed"}`).split("\n")[0]!;
  return { ok, output: line };
}

/** The airlock part of a hook command: `X hook <client> <event>` → `X`. */
export function commandOfHook(hook: string): string {
  return hook.replace(/\s+hook\s+\S+\s+\S+\s*$/, "");
}
