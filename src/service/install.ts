// `airlock install-service` and `uninstall-service`: the plans for systemd (Linux) and launchd
// (macOS). Every effect goes through the Runner; the unit and plist come from pure renderers.
// Both plans are idempotent: installing again rewrites the file and restarts the service, so
// an upgraded binary takes effect.
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { DEFAULT_PORT } from "../config/settings.ts";
import { LAUNCHD_LABEL, OLD_LAUNCHD_LABELS, renderLaunchdPlist } from "./launchd.ts";
import type { Runner } from "./runner.ts";
import { renderSystemdUnit, SYSTEMD_UNIT_NAME } from "./systemd.ts";

export interface ServiceEnv {
  platform: NodeJS.Platform;
  home: string;
  uid: number;
  user: string;
  /** $XDG_CONFIG_HOME or ~/.config */
  configHome: string;
  /** The command that starts airlock, before its "daemon" argument. */
  program: string[];
}

export interface InstallOptions {
  /** --store-file as given: a file (mode 0600) holding the shared store's postgres:// URL. */
  storeFile?: string | undefined;
  /** Where a relative --store-file is resolved from (default: the current directory). */
  cwd?: string;
}

const HEALTH_URL = `http://127.0.0.1:${DEFAULT_PORT}/healthz`;
const POSTGRES_URL = /^postgres(ql)?:\/\//i;
const STORE_FILE_RULE = "--store-file must name a file of mode 0600 (yours alone: no access for group or others) holding the shared store's postgres:// or postgresql:// URL.";

/**
 * The stable path to write into a service: Homebrew's opt/ path, never a versioned Cellar path
 * that disappears on upgrade; from source, bun plus the absolute path of src/main.ts.
 */
export function stableProgram(execPath: string, mainPath: string, compiled: boolean): string[] {
  if (!compiled) return [execPath, mainPath];
  const cellar = /^(.*)\/Cellar\/airlock\/[^/]+\/bin\/airlock$/.exec(execPath);
  if (cellar) return [`${cellar[1]}/opt/airlock/bin/airlock`];
  return [execPath];
}

/** A compiled binary runs its bundled entry from Bun's virtual file system. */
export function isCompiled(): boolean {
  return Bun.main.startsWith("/$bunfs/") || /^[A-Z]:\\~BUN\\/i.test(Bun.main);
}

export function currentServiceEnv(env: { xdgConfigHome?: string | undefined; home?: string | undefined } = {}): ServiceEnv {
  const home = env.home ?? homedir();
  const info = userInfo();
  return {
    platform: process.platform,
    home,
    uid: info.uid,
    user: info.username,
    configHome: env.xdgConfigHome ?? join(home, ".config"),
    program: stableProgram(process.execPath, Bun.main, isCompiled()),
  };
}

export function systemdUnitPath(e: ServiceEnv): string {
  return join(e.configHome, "systemd/user", SYSTEMD_UNIT_NAME);
}

export function launchdPlistPath(e: ServiceEnv, label = LAUNCHD_LABEL): string {
  return join(e.home, "Library/LaunchAgents", `${label}.plist`);
}

export function launchdLogPath(e: ServiceEnv): string {
  return join(e.home, "Library/Logs/airlock.log");
}

/** Where `brew services` keeps its own service for airlock, if it manages one. */
function brewServiceFile(e: ServiceEnv): string {
  return e.platform === "darwin"
    ? join(e.home, "Library/LaunchAgents/homebrew.mxcl.airlock.plist")
    : join(e.configHome, "systemd/user/homebrew.airlock.service");
}

function refuseIfBrewManages(e: ServiceEnv, r: Runner): boolean {
  if (!r.exists(brewServiceFile(e))) return false;
  r.say("`brew services` already manages airlock; use one or the other, not both.");
  r.say("Keep Homebrew's: `brew services restart airlock`. Or switch: `brew services stop airlock`, then `airlock install-service`.");
  return true;
}

/** The absolute path a --store-file names: ~ is the home directory, a relative path is from cwd. */
export function resolveStoreFile(path: string, o: { home: string; cwd: string }): string {
  const expanded = path === "~" ? o.home : path.startsWith("~/") ? join(o.home, path.slice(2)) : path;
  return isAbsolute(expanded) ? resolve(expanded) : resolve(o.cwd, expanded);
}

/**
 * Why the daemon could not use `path` as its AIRLOCK_STORE_FILE, or undefined when it can: the
 * same rules it applies at start (mode 0600, a postgres URL), checked now rather than in a
 * restart loop. Reads the file but never repeats what it holds: the URL may carry a password.
 * A look, not an effect: it reads the real file system, in a dry run too.
 */
export function storeFileProblem(path: string): string | undefined {
  const refuse = (what: string) => `--store-file ${path}: ${what}. ${STORE_FILE_RULE}`;
  if (/[\x00-\x1f\x7f]/.test(path)) return `--store-file: the path holds control characters. ${STORE_FILE_RULE}`;
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return refuse(code === "ENOENT" ? "no such file" : `cannot be read (${code ?? "error"})`);
  }
  if (!st.isFile()) return refuse("not a regular file");
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(4, "0");
    return refuse(`mode ${mode} lets other users at it, and the daemon refuses such a file (run: chmod 600 ${shellQuote(path)})`);
  }
  let text: string;
  try {
    accessSync(path, constants.R_OK);
    text = readFileSync(path, "utf8");
  } catch (err) {
    return refuse(`cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (!POSTGRES_URL.test(text.trim())) return refuse("does not hold a postgres:// or postgresql:// URL (its contents are not shown)");
  return undefined;
}

/** The AIRLOCK_STORE_FILE the installed unit or plist gives the daemon, if any. */
export function installedStoreFile(e: ServiceEnv, r: Runner): string | undefined {
  const text = r.readFile(e.platform === "darwin" ? launchdPlistPath(e) : systemdUnitPath(e));
  if (text === undefined) return undefined; // not installed
  if (e.platform === "darwin") {
    const m = /<key>AIRLOCK_STORE_FILE<\/key>\s*<string>([^<]*)<\/string>/.exec(text);
    return m ? xmlUnescape(m[1]!) : undefined;
  }
  const m = /^Environment="AIRLOCK_STORE_FILE=((?:[^"\\]|\\.)*)"$/m.exec(text);
  return m ? systemdUnescape(m[1]!) : undefined;
}

/** The inverse of systemdEnvironment's escaping. */
function systemdUnescape(s: string): string {
  return s.replace(/%%/g, "%").replace(/\\(x[0-9a-f]{2}|.)/g, (_, c: string) => (c.length === 3 ? String.fromCharCode(Number.parseInt(c.slice(1), 16)) : c));
}

function xmlUnescape(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp);/g, (_, n: string) => ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[n]!);
}

/** Quotes a word for a POSIX shell, for the commands we print. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

export async function installService(e: ServiceEnv, r: Runner, o: InstallOptions = {}): Promise<number> {
  if (refuseIfBrewManages(e, r)) return 1;
  if (e.platform !== "linux" && e.platform !== "darwin") {
    r.say(`install-service supports Linux (systemd) and macOS (launchd), not ${e.platform}. Run \`airlock daemon\` from your own service manager.`);
    return 1;
  }
  // Without the flag, the service keeps the store file it was installed with: install.sh runs
  // install-service at every upgrade, which must not quietly move a machine off the team's
  // store. (uninstall-service, then install-service, goes back to the local SQLite file.)
  const kept = o.storeFile === undefined ? installedStoreFile(e, r) : undefined;
  let storeFile: string | undefined;
  if (o.storeFile !== undefined || kept !== undefined) {
    storeFile = kept ?? (o.storeFile!.trim() === "" ? "" : resolveStoreFile(o.storeFile!, { home: e.home, cwd: o.cwd ?? process.cwd() }));
    const problem = storeFile === "" ? `--store-file needs a path. ${STORE_FILE_RULE}` : storeFileProblem(storeFile);
    if (problem) {
      r.say(problem);
      r.say("Nothing was installed or changed.");
      return 1;
    }
  }
  return e.platform === "linux" ? installSystemd(e, r, storeFile) : installLaunchd(e, r, storeFile);
}

function sayStoreFile(r: Runner, storeFile: string | undefined): void {
  if (storeFile !== undefined) r.say(`The daemon reads its shared store's URL from ${storeFile} (AIRLOCK_STORE_FILE); keep that file mode 0600.`);
}

export async function uninstallService(e: ServiceEnv, r: Runner): Promise<number> {
  if (e.platform === "linux") return uninstallSystemd(e, r);
  if (e.platform === "darwin") return uninstallLaunchd(e, r);
  r.say(`nothing to uninstall on ${e.platform}`);
  return 0;
}

async function installSystemd(e: ServiceEnv, r: Runner, storeFile: string | undefined): Promise<number> {
  const unitPath = systemdUnitPath(e);
  const unit = renderSystemdUnit({ program: e.program, storeFile });
  const systemctl = r.which("systemctl");
  const bus = systemctl ? r.probe(["systemctl", "--user", "show-environment"]) : undefined;
  if (!systemctl || bus?.code !== 0) {
    r.writeFile(unitPath, unit);
    r.say(
      !systemctl
        ? "There is no systemctl here, so the service was not started."
        : "There is no systemd user session here (no user bus), so the service was not started.",
    );
    r.say("Start the daemon yourself and keep it running, e.g.:");
    const envPrefix = storeFile === undefined ? "" : `AIRLOCK_STORE_FILE=${shellQuote(storeFile)} `;
    r.say(`  ${envPrefix}nohup ${e.program.join(" ")} daemon >>"$HOME/.airlock/daemon.log" 2>&1 &`);
    r.say(`Or, from a login session: systemctl --user daemon-reload && systemctl --user enable --now ${SYSTEMD_UNIT_NAME}`);
    return 1;
  }
  // An older Airlock (v2 used the same unit name) must let go of the port first.
  if (r.exists(unitPath)) r.run(["systemctl", "--user", "stop", SYSTEMD_UNIT_NAME]);
  r.writeFile(unitPath, unit);
  for (const cmd of [
    ["systemctl", "--user", "daemon-reload"],
    ["systemctl", "--user", "enable", SYSTEMD_UNIT_NAME],
    ["systemctl", "--user", "restart", SYSTEMD_UNIT_NAME],
  ]) {
    const res = r.run(cmd);
    if (res.code !== 0) {
      r.say(`\`${cmd.join(" ")}\` failed (${res.code}): ${res.stderr.trim()}`);
      return 1;
    }
  }
  const linger = r.probe(["loginctl", "show-user", e.user, "--property=Linger"]);
  if (linger.code === 0 && /Linger=no/.test(linger.stdout)) {
    r.say(`To keep airlock running when you are logged out (and start it at boot): loginctl enable-linger ${e.user}`);
  }
  sayStoreFile(r, storeFile);
  return reportHealth(r, `journalctl --user -u ${SYSTEMD_UNIT_NAME}`);
}

async function installLaunchd(e: ServiceEnv, r: Runner, storeFile: string | undefined): Promise<number> {
  const domain = `gui/${e.uid}`;
  for (const label of OLD_LAUNCHD_LABELS) {
    r.run(["launchctl", "bootout", `${domain}/${label}`]); // fails harmlessly when not loaded
    if (label !== LAUNCHD_LABEL && r.exists(launchdPlistPath(e, label))) {
      r.removeFile(launchdPlistPath(e, label));
    }
  }
  const plistPath = launchdPlistPath(e);
  r.writeFile(plistPath, renderLaunchdPlist({ program: e.program, logPath: launchdLogPath(e), storeFile }));
  const res = r.run(["launchctl", "bootstrap", domain, plistPath]);
  if (res.code !== 0) {
    r.say(`\`launchctl bootstrap ${domain} ${plistPath}\` failed (${res.code}): ${res.stderr.trim()}`);
    return 1;
  }
  sayStoreFile(r, storeFile);
  return reportHealth(r, `tail -f ${launchdLogPath(e)}`);
}

async function reportHealth(r: Runner, logHint: string): Promise<number> {
  if (r.dryRun) return 0;
  if (await r.healthy(HEALTH_URL, 10_000)) {
    r.say(`airlock is running: ${HEALTH_URL.replace("/healthz", "")} (connect an agent: airlock setup <client>)`);
    return 0;
  }
  r.say(`the service was installed but does not answer on ${HEALTH_URL} yet; see its log: ${logHint}`);
  return 1;
}

async function uninstallSystemd(e: ServiceEnv, r: Runner): Promise<number> {
  const unitPath = systemdUnitPath(e);
  if (!r.exists(unitPath)) {
    r.say(`no ${SYSTEMD_UNIT_NAME} is installed; nothing to do`);
    return 0;
  }
  if (r.which("systemctl")) r.run(["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT_NAME]);
  r.removeFile(unitPath);
  if (r.which("systemctl")) r.run(["systemctl", "--user", "daemon-reload"]);
  return 0;
}

async function uninstallLaunchd(e: ServiceEnv, r: Runner): Promise<number> {
  const plistPath = launchdPlistPath(e);
  r.run(["launchctl", "bootout", `gui/${e.uid}/${LAUNCHD_LABEL}`]);
  if (!r.exists(plistPath)) {
    r.say(`no ${LAUNCHD_LABEL} agent is installed; nothing else to do`);
    return 0;
  }
  r.removeFile(plistPath);
  return 0;
}
