import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installService, launchdPlistPath, resolveStoreFile, type ServiceEnv, systemdUnitPath, uninstallService } from "../../src/service/install.ts";
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
  readFile(path: string) {
    return this.files.get(path);
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
/** What installing on Linux with a user bus does, in order (with or without a store file). */
const LINUX_PLAN = [
  "probe systemctl --user show-environment",
  `write ${UNIT}`,
  "run systemctl --user daemon-reload",
  "run systemctl --user enable airlock.service",
  "run systemctl --user restart airlock.service",
  "probe loginctl show-user me --property=Linger",
  "healthy?",
];

describe("install-service on Linux", () => {
  test("writes the unit, then reloads, enables and restarts it, and hints at linger", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"], probes: { "loginctl show-user me --property=Linger": { stdout: "Linger=no\n" } } });
    expect(await installService(linux, r)).toBe(0);
    expect(r.log).toEqual(LINUX_PLAN);
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

describe("install-service --store-file", () => {
  const PASSWORD = "s3cr3t-pw";
  const URL = `postgres://airlock:${PASSWORD}@db.internal:5432/airlock`;
  const PLIST = "/Users/me/Library/LaunchAgents/com.airlock.daemon.plist";
  /** A store file in a fresh directory whose name has a space, a % and a $. */
  function storeFile(content = `${URL}\n`, mode = 0o600): string {
    const dir = join(mkdtempSync(join(tmpdir(), "airlock-store-")), "my 100% $store");
    mkdirSync(dir);
    const file = join(dir, "store.url");
    writeFileSync(file, content);
    chmodSync(file, mode);
    return file;
  }
  const said = (r: RecordingRunner) => r.said.join("\n");

  test("Linux: the unit gets Environment=AIRLOCK_STORE_FILE=<the path>, never the URL; the plan is unchanged", async () => {
    const file = storeFile();
    const r = new RecordingRunner({ tools: ["systemctl"] });
    expect(await installService(linux, r, { storeFile: file })).toBe(0);
    const unit = r.files.get(UNIT)!;
    expect(unit).toContain(`Environment="AIRLOCK_STORE_FILE=${file.replace(/%/g, "%%")}"\n`);
    expect(unit).not.toContain(PASSWORD);
    expect(unit).not.toContain("postgres://");
    expect(r.log).toEqual(LINUX_PLAN);
    expect(said(r)).toContain(`from ${file} (AIRLOCK_STORE_FILE)`);
    expect(said(r)).not.toContain(PASSWORD);
  });

  test("macOS: the plist's EnvironmentVariables gets AIRLOCK_STORE_FILE, never the URL", async () => {
    const file = storeFile(`postgresql://u:${PASSWORD}@h/db`);
    const r = new RecordingRunner();
    expect(await installService(mac, r, { storeFile: file })).toBe(0);
    const plist = r.files.get(PLIST)!;
    expect(plist).toContain("<key>AIRLOCK_STORE_FILE</key>");
    expect(plist).toContain(`<string>${file}</string>`); // no &<> in it to escape
    expect(plist).not.toContain(PASSWORD);
    expect(r.log).toContain(`run launchctl bootstrap gui/1000 ${PLIST}`);
  });

  test("without --store-file, a fresh install has no Environment line for it, as before", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"] });
    for (const o of [undefined, {}, { storeFile: undefined }]) {
      expect(await installService(linux, r, o)).toBe(0);
      expect(r.files.get(UNIT)).not.toContain("AIRLOCK_STORE_FILE");
      expect(r.files.get(UNIT)!.match(/^Environment=/gm)).toEqual(["Environment="]);
    }
    const m = new RecordingRunner();
    expect(await installService(mac, m)).toBe(0);
    expect(m.files.get(PLIST)).not.toContain("AIRLOCK_STORE_FILE");
  });

  test("installing again without --store-file (as install.sh does at every upgrade) keeps the store file the service has", async () => {
    // A path with the characters each format escapes: it must come back exactly.
    const dir = mkdtempSync(join(tmpdir(), "airlock-keep %$ \\ & <x> "));
    const file = join(dir, "store.url");
    writeFileSync(file, "postgres://u:keep-pw@db/airlock\n", { mode: 0o600 });
    const r = new RecordingRunner({ tools: ["systemctl"] });
    expect(await installService(linux, r, { storeFile: file })).toBe(0);
    const first = r.files.get(UNIT);
    expect(await installService(linux, r)).toBe(0);
    expect(r.files.get(UNIT)).toBe(first);
    const m = new RecordingRunner();
    expect(await installService(mac, m, { storeFile: file })).toBe(0);
    const plist = m.files.get(PLIST);
    expect(await installService(mac, m)).toBe(0);
    expect(m.files.get(PLIST)).toBe(plist);
    // After uninstall-service, a plain install is local again.
    expect(await uninstallService(linux, r)).toBe(0);
    expect(await installService(linux, r)).toBe(0);
    expect(r.files.get(UNIT)).not.toContain("AIRLOCK_STORE_FILE");
  });

  test("a relative path is made absolute from the working directory, and ~/ from home", async () => {
    const file = storeFile();
    const dir = join(file, "..");
    const r = new RecordingRunner({ tools: ["systemctl"] });
    expect(await installService(linux, r, { storeFile: "store.url", cwd: dir })).toBe(0);
    expect(r.files.get(UNIT)).toContain(`AIRLOCK_STORE_FILE=${file.replace(/%/g, "%%")}"`);
    expect(resolveStoreFile("~/.config/airlock/store.url", { home: "/home/me", cwd: "/tmp" })).toBe("/home/me/.config/airlock/store.url");
    expect(resolveStoreFile("../s", { home: "/home/me", cwd: "/srv/a" })).toBe("/srv/s");
    expect(resolveStoreFile("/etc/./airlock//s", { home: "/home/me", cwd: "/srv" })).toBe("/etc/airlock/s");
  });

  test("without a user bus, the manual command sets AIRLOCK_STORE_FILE, shell-quoted", async () => {
    const file = storeFile();
    const r = new RecordingRunner({ tools: [] });
    expect(await installService(linux, r, { storeFile: file })).toBe(1);
    expect(r.files.get(UNIT)).toContain("AIRLOCK_STORE_FILE=");
    expect(said(r)).toContain(`AIRLOCK_STORE_FILE='${file}' nohup `);
  });

  const refusals: [string, () => string, RegExp][] = [
    ["a missing file", () => join(tmpdir(), "airlock-no-such-dir", "store.url"), /no such file/],
    ["a directory", () => join(storeFile(), ".."), /not a regular file/],
    ["a file readable by others (0644)", () => storeFile(URL, 0o644), /mode 0644 .*chmod 600/],
    ["a file readable by the group (0640)", () => storeFile(URL, 0o640), /mode 0640 .*chmod 600/],
    ["a file writable by the group (0620)", () => storeFile(URL, 0o620), /mode 0620/],
    ["a file readable by others only (0604)", () => storeFile(URL, 0o604), /mode 0604/],
    ["a mysql URL", () => storeFile(`mysql://u:${PASSWORD}@h/db`), /does not hold a postgres:\/\/ or postgresql:\/\/ URL/],
    ["the word sqlite", () => storeFile("sqlite\n"), /does not hold a postgres/],
    ["an empty file", () => storeFile(""), /does not hold a postgres/],
    ["a URL not at the start", () => storeFile(`# ${PASSWORD}\n${URL}`), /does not hold a postgres/],
  ];
  for (const [what, make, why] of refusals) {
    test(`refuses ${what}, naming the flag and the rule, showing no contents, changing nothing`, async () => {
      const file = make();
      for (const [e, r] of [
        [linux, new RecordingRunner({ tools: ["systemctl"], files: { [UNIT]: "old" } })],
        [mac, new RecordingRunner()],
      ] as const) {
        expect(await installService(e, r, { storeFile: file })).toBe(1);
        expect(r.log).toEqual([]);
        expect(said(r)).toMatch(why);
        expect(said(r)).toContain(`--store-file ${file}:`);
        expect(said(r)).toContain("mode 0600");
        expect(said(r)).toContain("postgres:// or postgresql:// URL");
        expect(said(r)).not.toContain(PASSWORD);
      }
    });
  }

  test("refuses an empty --store-file", async () => {
    for (const storeFile of ["", "  "]) {
      const r = new RecordingRunner({ tools: ["systemctl"] });
      expect(await installService(linux, r, { storeFile })).toBe(1);
      expect(r.log).toEqual([]);
      expect(said(r)).toContain("--store-file needs a path");
    }
  });

  test.skipIf(process.getuid?.() === 0)("refuses a 0600 file it cannot read (mode 0000)", async () => {
    const file = storeFile(URL, 0o000);
    const r = new RecordingRunner({ tools: ["systemctl"] });
    expect(await installService(linux, r, { storeFile: file })).toBe(1);
    expect(said(r)).toMatch(/cannot be read \(EACCES\)/);
  });

  test("accepts postgres:// and postgresql:// in any case, with surrounding whitespace", async () => {
    for (const content of [URL, `  postgresql://h/db\n\n`, "POSTGRES://h/db", "PostgreSQL://h/db"]) {
      const r = new RecordingRunner({ tools: ["systemctl"] });
      expect(await installService(linux, r, { storeFile: storeFile(content) })).toBe(0);
    }
  });

  test("the brew services refusal still comes first", async () => {
    const r = new RecordingRunner({ tools: ["systemctl"], files: { "/home/me/.config/systemd/user/homebrew.airlock.service": "x" } });
    expect(await installService(linux, r, { storeFile: storeFile() })).toBe(1);
    expect(said(r)).toContain("brew services");
    expect(r.log).toEqual([]);
  });
});

describe("the install-service command with --store-file", () => {
  const dry = (home: string) => ({ AIRLOCK_SERVICE_DRYRUN: "1", HOME: home, XDG_CONFIG_HOME: join(home, ".config") });

  test("AIRLOCK_SERVICE_DRYRUN=1 prints the unit with the store file's path, not its URL, and writes nothing", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-dry-"));
    const file = join(home, "store 100% $x.url");
    writeFileSync(file, "postgres://u:dry-run-pw@db/airlock\n", { mode: 0o600 });
    chmodSync(file, 0o600);
    const { stdout, stderr, code } = await runCli(["install-service", "--store-file", file], dry(home));
    const unit = systemdUnitPath({ ...linux, home, configHome: join(home, ".config") });
    expect(stdout).toContain(`would write ${unit}`);
    expect(stdout).toContain(`Environment="AIRLOCK_STORE_FILE=${home}/store 100%% $x.url"`);
    expect(stdout + stderr).not.toContain("dry-run-pw");
    expect(existsSync(unit)).toBe(false);
    expect([0, 1]).toContain(code!); // 1 where this machine has no systemd user session
  });

  test("refuses a file others can read, with exit code 1, before writing anything", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-dry-"));
    const file = join(home, "store.url");
    writeFileSync(file, "postgres://u:dry-run-pw@db/airlock\n");
    chmodSync(file, 0o644);
    const { stdout, stderr, code } = await runCli(["install-service", "--store-file", file], dry(home));
    expect(code).toBe(1);
    expect(stdout).toContain(`--store-file ${file}: mode 0644`);
    expect(stdout).toContain(`chmod 600 ${file}`);
    expect(stdout).not.toContain("would write");
    expect(stdout + stderr).not.toContain("dry-run-pw");
  });

  test("without --store-file, the dry-run unit has no AIRLOCK_STORE_FILE", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-dry-"));
    const { stdout } = await runCli(["install-service"], dry(home));
    expect(stdout).toContain("Environment=NO_COLOR=1");
    expect(stdout).not.toContain("AIRLOCK_STORE_FILE");
  });

  test("--help describes the flag", async () => {
    const { stdout } = await runCli(["install-service", "--help"]);
    expect(stdout).toContain("--store-file");
    expect(stdout).toContain("AIRLOCK_STORE_FILE");
    expect(stdout).toContain("0600");
  });
});
