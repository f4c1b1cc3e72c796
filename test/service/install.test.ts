import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installService, launchdPlistPath, type ServiceEnv, systemdUnitPath, uninstallService } from "../../src/service/install.ts";
import type { CommandResult, Runner } from "../../src/service/runner.ts";
import { runCli } from "../helpers/daemon.ts";

/** A runner that records every effect and answers probes from a script. */
class RecordingRunner implements Runner {
  readonly dryRun = false;
  readonly log: string[] = [];
  readonly said: string[] = [];
  files = new Map<string, string>();
  constructor(
    private readonly o: {
      tools?: string[];
      probes?: Record<string, Partial<CommandResult>>;
      runs?: Record<string, Partial<CommandResult>>;
      healthy?: boolean;
      files?: Record<string, string>;
    } = {},
  ) {
    for (const [k, v] of Object.entries(o.files ?? {})) this.files.set(k, v);
  }
  private answer(table: Record<string, Partial<CommandResult>> | undefined, cmd: readonly string[]): CommandResult {
    const a = table?.[cmd.join(" ")] ?? {};
    return { code: a.code ?? 0, stdout: a.stdout ?? "", stderr: a.stderr ?? "" };
  }
  run(cmd: readonly string[]) {
    this.log.push(`run ${cmd.join(" ")}`);
    return this.answer(this.o.runs, cmd);
  }
  probe(cmd: readonly string[]) {
    this.log.push(`probe ${cmd.join(" ")}`);
    return this.answer(this.o.probes, cmd);
  }
  which(name: string) {
    return (this.o.tools ?? []).includes(name) ? `/usr/bin/${name}` : null;
  }
  async healthy() {
    this.log.push("healthy?");
    return this.o.healthy ?? true;
  }
  exists(path: string) {
    return this.files.has(path);
  }
  writeFile(path: string, content: string) {
    this.log.push(`write ${path}`);
    this.files.set(path, content);
  }
  removeFile(path: string) {
    this.log.push(`remove ${path}`);
    this.files.delete(path);
  }
  say(line: string) {
    this.said.push(line);
  }
}

const linux: ServiceEnv = { platform: "linux", home: "/home/me", uid: 1000, user: "me", configHome: "/home/me/.config", program: ["/home/me/.local/bin/airlock"] };
const mac: ServiceEnv = { ...linux, platform: "darwin", home: "/Users/me", configHome: "/Users/me/.config" };
const UNIT = "/home/me/.config/systemd/user/airlock.service";

describe("install-service on Linux", () => {
  test("writes the unit, then reloads, enables and restarts it, and hints at linger", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"], probes: { "loginctl show-user me --property=Linger": { stdout: "Linger=no\n" } } });
    expect(await installService(linux, r)).toBe(0);
    expect(r.log).toEqual([
      "probe systemctl --user show-environment",
      `write ${UNIT}`,
      "run systemctl --user daemon-reload",
      "run systemctl --user enable airlock.service",
      "run systemctl --user restart airlock.service",
      "probe loginctl show-user me --property=Linger",
      "healthy?",
    ]);
    expect(r.files.get(UNIT)).toContain('ExecStart="/home/me/.local/bin/airlock" "daemon"');
    expect(r.said.join("\n")).toContain("loginctl enable-linger me");
  });

  test("stops an installed Airlock first, so the port is free, and says nothing of linger when it is on", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"], files: { [UNIT]: "old" }, probes: { "loginctl show-user me --property=Linger": { stdout: "Linger=yes\n" } } });
    expect(await installService(linux, r)).toBe(0);
    expect(r.log.indexOf("run systemctl --user stop airlock.service")).toBeLessThan(r.log.indexOf(`write ${UNIT}`));
    expect(r.log).toContain("run systemctl --user restart airlock.service");
    expect(r.said.join("\n")).not.toContain("enable-linger");
  });

  test("is idempotent: a second install rewrites the same unit and restarts", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"] });
    await installService(linux, r);
    const first = r.files.get(UNIT);
    expect(await installService(linux, r)).toBe(0);
    expect(r.files.get(UNIT)).toBe(first!);
    expect(r.log.filter((l) => l === "run systemctl --user restart airlock.service")).toHaveLength(2);
  });

  test("without systemctl or a user bus, writes the unit and gives manual instructions", async () => {
    for (const r of [new RecordingRunner({ tools: [] }), new RecordingRunner({ tools: ["systemctl"], probes: { "systemctl --user show-environment": { code: 1 } } })]) {
      expect(await installService(linux, r)).toBe(1);
      expect(r.log.some((l) => l.startsWith("run "))).toBe(false);
      expect(r.files.has(UNIT)).toBe(true);
      expect(r.said.join("\n")).toMatch(/nohup .*airlock daemon/);
    }
  });

  test("refuses when brew services already manages airlock, and changes nothing", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"], files: { "/home/me/.config/systemd/user/homebrew.airlock.service": "x" } });
    expect(await installService(linux, r)).toBe(1);
    expect(r.log).toEqual([]);
    expect(r.said.join("\n")).toContain("brew services");
  });

  test("reports a failed systemctl step and a service that never became healthy", async () => {
    const failing = new RecordingRunner({ tools: ["systemctl"], runs: { "systemctl --user enable airlock.service": { code: 1, stderr: "boom" } } });
    expect(await installService(linux, failing)).toBe(1);
    expect(failing.log).not.toContain("run systemctl --user restart airlock.service");
    expect(failing.said.join("\n")).toContain("boom");
    const sick = new RecordingRunner({ tools: ["systemctl"], healthy: false });
    expect(await installService(linux, sick)).toBe(1);
    expect(sick.said.join("\n")).toContain("journalctl --user -u airlock.service");
  });

  test("uninstall disables, removes and reloads; a second uninstall has nothing to do", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"], files: { [UNIT]: "x" } });
    expect(await uninstallService(linux, r)).toBe(0);
    expect(r.log).toEqual(["run systemctl --user disable --now airlock.service", `remove ${UNIT}`, "run systemctl --user daemon-reload"]);
    const again = r.log.length;
    expect(await uninstallService(linux, r)).toBe(0);
    expect(r.log.length).toBe(again);
  });
});

describe("install-service on macOS", () => {
  const plist = "/Users/me/Library/LaunchAgents/com.airlock.daemon.plist";
  const v1 = "/Users/me/Library/LaunchAgents/com.agentpeek.daemon.plist";

  test("boots out v1 and v2 agents, removes v1's plist, writes ours and bootstraps it", async () => {
    const r = new RecordingRunner({ files: { [v1]: "old" } });
    expect(launchdPlistPath(mac)).toBe(plist);
    expect(await installService(mac, r)).toBe(0);
    expect(r.log).toEqual([
      "run launchctl bootout gui/1000/com.agentpeek.daemon",
      `remove ${v1}`,
      "run launchctl bootout gui/1000/com.airlock.daemon",
      `write ${plist}`,
      `run launchctl bootstrap gui/1000 ${plist}`,
      "healthy?",
    ]);
    expect(r.files.get(plist)).toContain("<string>/Users/me/Library/Logs/airlock.log</string>");
  });

  test("refuses when brew services manages airlock", async () => {
    const r = new RecordingRunner({ files: { "/Users/me/Library/LaunchAgents/homebrew.mxcl.airlock.plist": "x" } });
    expect(await installService(mac, r)).toBe(1);
    expect(r.log).toEqual([]);
  });

  test("uninstall boots out and removes the plist, and is idempotent", async () => {
    const r = new RecordingRunner({ files: { [plist]: "x" } });
    expect(await uninstallService(mac, r)).toBe(0);
    expect(r.files.has(plist)).toBe(false);
    expect(await uninstallService(mac, r)).toBe(0);
    expect(r.log.filter((l) => l.startsWith("remove"))).toHaveLength(1);
  });
});

describe("the install-service command", () => {
  test("AIRLOCK_SERVICE_DRYRUN=1 prints the plan and writes nothing", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-dry-"));
    const { stdout, code } = await runCli(["install-service"], { AIRLOCK_SERVICE_DRYRUN: "1", HOME: home, XDG_CONFIG_HOME: join(home, ".config") });
    const unit = systemdUnitPath({ ...linux, home, configHome: join(home, ".config") });
    expect(stdout).toContain(`would write ${unit}`);
    expect(stdout).toContain("[Service]");
    expect(existsSync(unit)).toBe(false);
    expect([0, 1]).toContain(code!); // 1 where this machine has no systemd user session
  });
});
