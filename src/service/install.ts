// `airlock install-service` and `uninstall-service`: the plans for systemd (Linux) and launchd
// (macOS). Every effect goes through the Runner; the unit and plist come from pure renderers.
// Both plans are idempotent: installing again rewrites the file and restarts the service, so
// an upgraded binary takes effect.
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
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

const HEALTH_URL = `http://127.0.0.1:${DEFAULT_PORT}/healthz`;

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

export async function installService(e: ServiceEnv, r: Runner): Promise<number> {
  if (refuseIfBrewManages(e, r)) return 1;
  if (e.platform === "linux") return installSystemd(e, r);
  if (e.platform === "darwin") return installLaunchd(e, r);
  r.say(`install-service supports Linux (systemd) and macOS (launchd), not ${e.platform}. Run \`airlock daemon\` from your own service manager.`);
  return 1;
}

export async function uninstallService(e: ServiceEnv, r: Runner): Promise<number> {
  if (e.platform === "linux") return uninstallSystemd(e, r);
  if (e.platform === "darwin") return uninstallLaunchd(e, r);
  r.say(`nothing to uninstall on ${e.platform}`);
  return 0;
}

async function installSystemd(e: ServiceEnv, r: Runner): Promise<number> {
  const unitPath = systemdUnitPath(e);
  const unit = renderSystemdUnit({ program: e.program });
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
    r.say(`  nohup ${e.program.join(" ")} daemon >>"$HOME/.airlock/daemon.log" 2>&1 &`);
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
  return reportHealth(r, `journalctl --user -u ${SYSTEMD_UNIT_NAME}`);
}

async function installLaunchd(e: ServiceEnv, r: Runner): Promise<number> {
  const domain = `gui/${e.uid}`;
  for (const label of OLD_LAUNCHD_LABELS) {
    r.run(["launchctl", "bootout", `${domain}/${label}`]); // fails harmlessly when not loaded
    if (label !== LAUNCHD_LABEL && r.exists(launchdPlistPath(e, label))) {
      r.removeFile(launchdPlistPath(e, label));
    }
  }
  const plistPath = launchdPlistPath(e);
  r.writeFile(plistPath, renderLaunchdPlist({ program: e.program, logPath: launchdLogPath(e) }));
  const res = r.run(["launchctl", "bootstrap", domain, plistPath]);
  if (res.code !== 0) {
    r.say(`\`launchctl bootstrap ${domain} ${plistPath}\` failed (${res.code}): ${res.stderr.trim()}`);
    return 1;
  }
  return reportHealth(r, `tail -f ${launchdLogPath(e)}`);
}

async function reportHealth(r: Runner, logHint: string): Promise<number> {
  if (r.dryRun) return 0;
  if (await r.healthy(HEALTH_URL, 10_000)) {
    r.say(`airlock is running: ${HEALTH_URL.replace("/healthz", "")} (client config: airlock token)`);
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
