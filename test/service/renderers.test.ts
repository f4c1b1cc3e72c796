import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderLaunchdPlist, xmlEscape } from "../../src/service/launchd.ts";
import { renderSystemdUnit, systemdEnvironment, systemdQuote } from "../../src/service/systemd.ts";
import { stableProgram } from "../../src/service/install.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "airlock-svc-"));

/** Parses a plist with Python's plistlib (always present where python3 is) into JSON. */
function parsePlist(xml: string): any {
  const file = join(tmp(), "p.plist");
  writeFileSync(file, xml);
  const r = Bun.spawnSync(["python3", "-c", "import plistlib,json,sys; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))", file]);
  if (r.exitCode !== 0) throw new Error(`plistlib refused it: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

describe("systemd unit", () => {
  test("restarts on failure, starts with the user session and runs the daemon at a quoted path", () => {
    const unit = renderSystemdUnit({ program: ["/home/me/.local/bin/airlock"] });
    expect(unit).toContain("Restart=on-failure");
    expect(unit).toContain("WantedBy=default.target");
    expect(unit).toContain('ExecStart="/home/me/.local/bin/airlock" "daemon"');
    expect(unit).toContain("StandardOutput=journal");
  });

  test("escapes spaces, quotes, percent and dollar signs in ExecStart words", () => {
    expect(systemdQuote('/a b/"x"/100%/$HOME')).toBe('"/a b/\\"x\\"/100%%/$$HOME"');
  });

  test("passes systemd-analyze verify without a single warning", () => {
    const dir = tmp();
    const bin = join(dir, "air lock");
    writeFileSync(bin, "#!/bin/sh\n", { mode: 0o755 });
    const unitPath = join(dir, "airlock.service");
    writeFileSync(unitPath, renderSystemdUnit({ program: [bin] }));
    const r = Bun.spawnSync(["systemd-analyze", "verify", unitPath]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr.toString().trim()).toBe("");
  });
});

/**
 * Decodes one Environment= value the way systemd does (systemd.exec(5); load-fragment.c
 * config_parse_environ: split into words with quotes removed and C escapes undone, then %
 * specifiers expanded; no $ expansion). Only the subset our renderer emits: one "..." word.
 */
function decodeEnvironment(rvalue: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"$/s.exec(rvalue);
  if (!m) throw new Error(`not one quoted word: ${rvalue}`);
  const unescaped = m[1]!.replace(/\\(x[0-9a-f]{2}|.)/gs, (_, e: string) => (e.startsWith("x") && e.length === 3 ? String.fromCharCode(parseInt(e.slice(1), 16)) : e));
  if (/%[^%]/.test(unescaped.replace(/%%/g, ""))) throw new Error(`an unescaped specifier: ${rvalue}`);
  return unescaped.replace(/%%/g, "%");
}

describe("systemd unit with a store file", () => {
  const OLD_UNIT = `[Unit]
Description=Airlock: coordination daemon for AI coding agents (MCP on 127.0.0.1:27183)
Documentation=https://github.com/airlock-dev/airlock

[Service]
Type=simple
ExecStart="/home/me/.local/bin/airlock" "daemon"
Restart=on-failure
RestartSec=2
StandardOutput=journal
StandardError=journal
Environment=NO_COLOR=1

[Install]
WantedBy=default.target
`;

  test("without one, the unit is exactly what it was before --store-file existed", () => {
    expect(renderSystemdUnit({ program: ["/home/me/.local/bin/airlock"] })).toBe(OLD_UNIT);
    expect(renderSystemdUnit({ program: ["/home/me/.local/bin/airlock"], storeFile: undefined })).toBe(OLD_UNIT);
  });

  test("with one, adds a single Environment= line naming the file, and nothing else changes", () => {
    const unit = renderSystemdUnit({ program: ["/home/me/.local/bin/airlock"], storeFile: "/home/me/.config/airlock/store.url" });
    expect(unit).toBe(OLD_UNIT.replace("Environment=NO_COLOR=1\n", 'Environment=NO_COLOR=1\nEnvironment="AIRLOCK_STORE_FILE=/home/me/.config/airlock/store.url"\n'));
    expect(unit.match(/AIRLOCK_STORE_FILE/g)).toHaveLength(1);
  });

  test("quotes the assignment per systemd.exec: \\ and \" escaped, % doubled, $ left alone (unlike ExecStart)", () => {
    expect(systemdEnvironment("AIRLOCK_STORE_FILE", '/a b/100%/$HOME/"q"\\x')).toBe('"AIRLOCK_STORE_FILE=/a b/100%%/$HOME/\\"q\\"\\\\x"');
    expect(systemdEnvironment("V", "a\nb\tc")).toBe('"V=a\\x0ab\\x09c"');
    // The same path in ExecStart doubles $, because ExecStart expands variables; Environment= does not.
    expect(systemdQuote("/a/$x")).toBe('"/a/$$x"');
    expect(systemdEnvironment("V", "/a/$x")).toBe('"V=/a/$x"');
  });

  test("every odd path decodes back to itself", () => {
    for (const path of ["/plain/store.url", "/with space/s", "/100%/%h/%%", "/$HOME/${X}/$$", '/q"u"o\'te', "/back\\slash\\", "/semi;colon#hash", "/ünïcödé/∂"]) {
      const line = renderSystemdUnit({ program: ["/bin/airlock"], storeFile: path })
        .split("\n")
        .find((l) => l.startsWith("Environment=\"AIRLOCK_STORE_FILE="))!;
      expect(decodeEnvironment(line.slice("Environment=".length))).toBe(`AIRLOCK_STORE_FILE=${path}`);
    }
  });

  test("passes systemd-analyze verify without a single warning, for a path with spaces, % and $", () => {
    const dir = tmp();
    const bin = join(dir, "air lock");
    writeFileSync(bin, "#!/bin/sh\n", { mode: 0o755 });
    const unitPath = join(dir, "airlock.service");
    writeFileSync(unitPath, renderSystemdUnit({ program: [bin], storeFile: join(dir, 'my store/100% "$HOME"\\url') }));
    const r = Bun.spawnSync(["systemd-analyze", "verify", unitPath]);
    expect(r.stderr.toString().trim()).toBe("");
    expect(r.exitCode).toBe(0);
  });
});

describe("launchd plist", () => {
  test("parses as a property list with RunAtLoad, KeepAlive on failure and logs", () => {
    const p = parsePlist(renderLaunchdPlist({ program: ["/opt/homebrew/opt/airlock/bin/airlock"], logPath: "/Users/me/Library/Logs/airlock.log" }));
    expect(p.Label).toBe("com.airlock.daemon");
    expect(p.ProgramArguments).toEqual(["/opt/homebrew/opt/airlock/bin/airlock", "daemon"]);
    expect(p.RunAtLoad).toBe(true);
    expect(p.KeepAlive).toEqual({ SuccessfulExit: false });
    expect(p.StandardOutPath).toBe("/Users/me/Library/Logs/airlock.log");
    expect(p.StandardErrorPath).toBe("/Users/me/Library/Logs/airlock.log");
  });

  test("escapes XML in every value so odd paths survive intact", () => {
    const odd = "/Users/a&b/<x>/\"q\"/'s'/airlock";
    const xml = renderLaunchdPlist({ program: [odd], logPath: "/tmp/l&g.log" });
    expect(xml).not.toContain("a&b");
    expect(xmlEscape("&<>\"'")).toBe("&amp;&lt;&gt;&quot;&apos;");
    const p = parsePlist(xml);
    expect(p.ProgramArguments[0]).toBe(odd);
    expect(p.StandardOutPath).toBe("/tmp/l&g.log");
  });
});

describe("launchd plist with a store file", () => {
  const base = { program: ["/opt/homebrew/opt/airlock/bin/airlock"], logPath: "/Users/me/Library/Logs/airlock.log" };

  test("without one, the environment holds NO_COLOR alone", () => {
    const xml = renderLaunchdPlist(base);
    expect(xml).not.toContain("AIRLOCK_STORE_FILE");
    expect(parsePlist(xml).EnvironmentVariables).toEqual({ NO_COLOR: "1" });
    expect(renderLaunchdPlist({ ...base, storeFile: undefined })).toBe(xml);
  });

  test("with one, EnvironmentVariables gains AIRLOCK_STORE_FILE, XML-escaped, and the rest is unchanged", () => {
    const odd = "/Users/a&b/<store> \"'s'/100%/$HOME/url";
    const xml = renderLaunchdPlist({ ...base, storeFile: odd });
    expect(xml).not.toContain("a&b");
    expect(xml).toContain("<string>/Users/a&amp;b/&lt;store&gt; &quot;&apos;s&apos;/100%/$HOME/url</string>");
    const p = parsePlist(xml);
    expect(p.EnvironmentVariables).toEqual({ NO_COLOR: "1", AIRLOCK_STORE_FILE: odd });
    const { EnvironmentVariables: _a, ...rest } = p;
    const { EnvironmentVariables: _b, ...before } = parsePlist(renderLaunchdPlist(base));
    expect(rest).toEqual(before);
  });
});

describe("the binary path written into a service", () => {
  test("uses Homebrew's stable opt path instead of a versioned Cellar path", () => {
    expect(stableProgram("/opt/homebrew/Cellar/airlock/0.1.0/bin/airlock", "/$bunfs/root/airlock", true)).toEqual(["/opt/homebrew/opt/airlock/bin/airlock"]);
    expect(stableProgram("/home/linuxbrew/.linuxbrew/Cellar/airlock/1.2.3_1/bin/airlock", "", true)).toEqual([
      "/home/linuxbrew/.linuxbrew/opt/airlock/bin/airlock",
    ]);
  });

  test("keeps an installed binary's own path, and runs source through bun", () => {
    expect(stableProgram("/home/me/.local/bin/airlock", "/$bunfs/root/airlock", true)).toEqual(["/home/me/.local/bin/airlock"]);
    expect(stableProgram("/usr/bin/bun", "/repo/src/main.ts", false)).toEqual(["/usr/bin/bun", "/repo/src/main.ts"]);
  });
});
