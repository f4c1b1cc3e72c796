import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderLaunchdPlist, xmlEscape } from "../../src/service/launchd.ts";
import { renderSystemdUnit, systemdQuote } from "../../src/service/systemd.ts";
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
