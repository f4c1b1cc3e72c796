// release/formula.ts: parseSums and renderFormula as pure functions, the rendered Ruby checked by
// `ruby -c`, and the formula evaluated by a stand-in for Homebrew (formula-harness.rb): the
// url/sha256 each platform sees, the service, and the formula's own `test do` against the
// real binary.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TARGETS, type Target } from "../../release/build.ts";
import { DEFAULT_BASE_URL, parseSums, renderFormula } from "../../release/formula.ts";
import { fakeTarball, hostTarget, PKG_VERSION, releaseTarball, removeTmp, ROOT, tmp } from "./helpers.ts";

afterAll(removeTmp);

const HARNESS = join(import.meta.dir, "formula-harness.rb");
const COMMITTED = join(ROOT, "Formula/airlock.rb");

// A different checksum per target, so a swapped pair cannot pass.
const SUMS = Object.fromEntries(TARGETS.map((t, i) => [t, String(i + 1).repeat(64)])) as Record<Target, string>;
const BASE = "https://example.test/airlock/releases/download";
const INPUT = { version: "1.2.3", baseUrl: BASE, sums: SUMS };

const RUBY = Bun.which("ruby");
if (!RUBY) console.warn("SKIPPED: the ruby -c and formula-harness tests; ruby not found (apt-get install -y ruby)");
const withRuby = test.skipIf(!RUBY);

function rubyCheck(path: string): { code: number; out: string } {
  const r = Bun.spawnSync([RUBY!, "-c", path], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, out: r.stdout.toString() + r.stderr.toString() };
}

interface HarnessReport {
  class: string;
  desc: string;
  homepage: string;
  version: string;
  license: string;
  url: string[];
  sha256: string[];
  opt_bin: string;
  var: string;
  service?: { run: string[]; keep_alive: boolean; log_path: string; error_log_path: string };
  caveats?: string;
  has_test: boolean;
  installed?: string[];
  test?: string;
}

function harness(formula: string, platform: Target, stage?: string): { code: number; report: HarnessReport; stderr: string } {
  const r = Bun.spawnSync([RUBY!, HARNESS, formula, platform, ...(stage ? [stage] : [])], { stdout: "pipe", stderr: "pipe" });
  const stdout = r.stdout.toString();
  const stderr = r.stderr.toString();
  // The report is the last line; the daemon started by `test do` may log above it.
  const last = stdout.trimEnd().split("\n").at(-1) ?? "";
  if (!last.startsWith("{")) throw new Error(`formula-harness.rb printed no report (exit ${r.exitCode}): ${stdout}${stderr}`);
  return { code: r.exitCode ?? -1, report: JSON.parse(last) as HarnessReport, stderr };
}

function writeTemp(text: string): string {
  const path = join(tmp("formula"), "airlock.rb");
  writeFileSync(path, text);
  return path;
}

/** Each url with the sha256 on the next line and the on_* blocks it sits in. */
function urlEntries(ruby: string): { url: string; sha: string; blocks: string[] }[] {
  const lines = ruby.split("\n").map((l) => l.trim());
  const stack: string[] = [];
  const out: { url: string; sha: string; blocks: string[] }[] = [];
  for (const [i, line] of lines.entries()) {
    const open = /^(on_\w+) do$/.exec(line);
    if (open) stack.push(open[1]!);
    else if (line === "end" && stack.length > 0) stack.pop();
    const url = /^url "([^"]+)"$/.exec(line);
    if (url) {
      const sha = /^sha256 "([^"]+)"$/.exec(lines[i + 1] ?? "");
      expect(sha, `the line after ${line} must be its sha256`).not.toBeNull();
      out.push({ url: url[1]!, sha: sha![1]!, blocks: [...stack] });
    }
  }
  return out;
}

const BLOCKS: Record<Target, string[]> = {
  "darwin-arm64": ["on_macos", "on_arm"],
  "darwin-x64": ["on_macos", "on_intel"],
  "linux-arm64": ["on_linux", "on_arm"],
  "linux-x64": ["on_linux", "on_intel"],
};

describe("parseSums", () => {
  const line = (t: Target, sep = "  ") => `${SUMS[t]}${sep}airlock-${t}.tar.gz`;

  test("reads sha256sum output, including binary-mode '*', CRLF and uppercase hex, ignoring other files", () => {
    const text = [
      line("darwin-arm64"),
      `${SUMS["darwin-x64"].toUpperCase()}  airlock-darwin-x64.tar.gz`,
      line("linux-arm64", " *") + "\r",
      `${"f".repeat(64)}  airlock-windows-x64.zip`,
      line("linux-x64"),
      "",
    ].join("\n");
    expect(parseSums(text)).toEqual(SUMS);
  });

  test("names every missing target and says how to build them", () => {
    expect(() => parseSums(`${line("linux-x64")}\n`)).toThrow(
      "SHA256SUMS has no checksum for airlock-linux-arm64.tar.gz, airlock-darwin-x64.tar.gz, airlock-darwin-arm64.tar.gz; build every target first: bun release/build.ts",
    );
  });

  test("rejects a malformed line, a short checksum and conflicting duplicates", () => {
    const all = TARGETS.map((t) => line(t)).join("\n");
    expect(() => parseSums(`${all}\nnot a checksum line\n`)).toThrow('SHA256SUMS line 5 is not "<sha256>  <file>"');
    expect(() => parseSums(all.replace(SUMS["linux-x64"], "abc"))).toThrow("airlock-linux-x64.tar.gz has a malformed sha256 (abc)");
    expect(() => parseSums(`${all}\n${"e".repeat(64)}  airlock-linux-x64.tar.gz\n`)).toThrow("lists airlock-linux-x64.tar.gz twice");
    expect(parseSums(`${all}\n${line("linux-x64")}\n`)).toEqual(SUMS); // an exact repeat is harmless
  });
});

describe("renderFormula", () => {
  const ruby = renderFormula(INPUT);

  test("puts each target's sha256 right after its URL, inside on_macos/on_linux and on_arm/on_intel", () => {
    const entries = urlEntries(ruby);
    expect(entries).toHaveLength(4);
    for (const t of TARGETS) {
      const e = entries.find((x) => x.url === `${BASE}/v1.2.3/airlock-${t}.tar.gz`);
      expect(e, `no url for ${t}`).toBeDefined();
      expect(e!.sha).toBe(SUMS[t]);
      expect(e!.blocks).toEqual(BLOCKS[t]);
    }
  });

  test("declares the class, version, license and homepage", () => {
    expect(ruby).toMatch(/^class Airlock < Formula$/m);
    expect(ruby).toContain('\n  version "1.2.3"\n');
    expect(ruby).toContain('\n  license "MIT"\n');
    expect(ruby).toMatch(/^ {2}desc "[^"]+"$/m);
    expect(ruby).toMatch(/^ {2}homepage "https:\/\/[^"]+"$/m);
    expect(ruby).toContain('  def install\n    bin.install "airlock"\n  end\n');
  });

  test("runs the daemon from opt_bin as a kept-alive service with a log file", () => {
    const service = /\n {2}service do\n([\s\S]*?)\n {2}end\n/.exec(ruby)?.[1];
    expect(service).toBeDefined();
    expect(service).toContain('run [opt_bin/"airlock", "daemon"]');
    expect(service).toContain("keep_alive true");
    expect(service).toContain('log_path var/"log/airlock.log"');
    expect(service).toContain('error_log_path var/"log/airlock.log"');
  });

  test("caveats: one of brew services or install-service, the MCP URL, the token", () => {
    const caveats = /def caveats\n([\s\S]*?)\n {2}end\n/.exec(ruby)?.[1] ?? "";
    expect(caveats).toContain("brew services start airlock");
    expect(caveats).toContain("airlock install-service");
    expect(caveats).toContain("not both");
    expect(caveats).toContain("http://127.0.0.1:27183");
    expect(caveats).toContain("~/.airlock/token");
    expect(caveats).toContain("`airlock token`");
  });

  test("has a test block that checks the version and /healthz of a daemon on a free port", () => {
    const block = /\n {2}test do\n([\s\S]*?)\n {2}end\nend\n$/.exec(ruby)?.[1] ?? "";
    expect(block).toContain('shell_output("#{bin}/airlock version")');
    expect(block).toContain("port = free_port");
    expect(block).toContain('"AIRLOCK_HOME" => testpath.to_s');
    expect(block).toContain('"--port", port.to_s, "--db", "#{testpath}/state.db"');
    expect(block).toContain('assert_equal "ok", shell_output("curl -s http://127.0.0.1:#{port}/healthz")');
    expect(block).toContain('Process.kill("TERM", pid)');
  });

  test("is deterministic and drops a trailing slash from the base URL", () => {
    expect(renderFormula(INPUT)).toBe(ruby);
    expect(renderFormula({ ...INPUT, baseUrl: `${BASE}/` })).toBe(ruby);
  });

  test("rejects input that would make a wrong or broken formula", () => {
    expect(() => renderFormula({ ...INPUT, version: "v1.2.3" })).toThrow("version must be semver");
    expect(() => renderFormula({ ...INPUT, baseUrl: 'https://x.test/"; system "rm' })).toThrow("base URL must be");
    expect(() => renderFormula({ ...INPUT, baseUrl: "https://x.test/#{ENV}" })).toThrow("base URL must be");
    expect(() => renderFormula({ ...INPUT, sums: { ...SUMS, "darwin-x64": "A".repeat(64) } })).toThrow("sha256 for darwin-x64");
    const { "linux-arm64": _, ...three } = SUMS;
    expect(() => renderFormula({ ...INPUT, sums: three as Record<Target, string> })).toThrow("sha256 for linux-arm64");
  });

  test("the CLI renders --sums with --base-url into --out", () => {
    const dir = tmp("cli");
    const sums = TARGETS.map((t) => `${SUMS[t]}  airlock-${t}.tar.gz\n`).join("");
    writeFileSync(join(dir, "SHA256SUMS"), sums);
    const out = join(dir, "Formula/airlock.rb");
    const r = Bun.spawnSync([process.execPath, join(ROOT, "release/formula.ts"), "--sums", join(dir, "SHA256SUMS"), "--base-url", BASE, "--out", out], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.stderr.toString()).toBe("");
    expect(r.exitCode).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(renderFormula({ version: PKG_VERSION, baseUrl: BASE, sums: SUMS }));
  });
});

describe("as Ruby", () => {
  withRuby("the rendered formula passes ruby -c", () => {
    const r = rubyCheck(writeTemp(renderFormula(INPUT)));
    expect(r.out).toContain("Syntax OK");
    expect(r.code).toBe(0);
    // and ruby -c does catch a broken one
    expect(rubyCheck(writeTemp(renderFormula(INPUT).replace(/\nend\n$/, "\n"))).code).not.toBe(0);
  });

  test("the committed Formula/airlock.rb is for package.json's version, with a sha256 per platform", () => {
    expect(existsSync(COMMITTED)).toBe(true);
    const text = readFileSync(COMMITTED, "utf8");
    expect(text).toContain(`\n  version "${PKG_VERSION}"\n`);
    const entries = urlEntries(text);
    expect(entries.map((e) => e.blocks).sort()).toEqual(Object.values(BLOCKS).sort());
    for (const e of entries) {
      expect(e.url).toStartWith(`${DEFAULT_BASE_URL}/v${PKG_VERSION}/airlock-`);
      expect(e.sha).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  withRuby("the committed Formula/airlock.rb passes ruby -c", () => {
    const r = rubyCheck(COMMITTED);
    expect(r.out).toContain("Syntax OK");
    expect(r.code).toBe(0);
  });

  withRuby.each([...TARGETS])("Homebrew on %s would fetch that target's url with its sha256 and run opt_bin/airlock daemon", (t) => {
    const { code, report } = harness(writeTemp(renderFormula(INPUT)), t);
    expect(code).toBe(0);
    expect(report.class).toBe("Airlock");
    expect(report.url).toEqual([`${BASE}/v1.2.3/airlock-${t}.tar.gz`]);
    expect(report.sha256).toEqual([SUMS[t]]);
    expect(report.version).toBe("1.2.3");
    expect(report.service).toEqual({
      run: [`${report.opt_bin}/airlock`, "daemon"],
      keep_alive: true,
      log_path: `${report.var}/log/airlock.log`,
      error_log_path: `${report.var}/log/airlock.log`,
    });
    expect(report.caveats).toContain("brew services start airlock");
    expect(report.has_test).toBe(true);
  });

  withRuby("its install and test blocks pass against the real release tarball", () => {
    const host = hostTarget();
    if (!host) throw new Error(`no release target for ${process.platform}-${process.arch}`);
    // Unpack the tarball as Homebrew would, then install from there and run `test do`.
    const stage = tmp("stage");
    writeFileSync(join(stage, "release.tar.gz"), releaseTarball(host));
    expect(Bun.spawnSync(["tar", "-xzf", "release.tar.gz"], { cwd: stage }).exitCode).toBe(0);
    const formula = writeTemp(renderFormula({ ...INPUT, version: PKG_VERSION }));
    const { code, report, stderr } = harness(formula, host, stage);
    expect(report.installed).toEqual(["airlock"]);
    expect(report.test, stderr).toBe("passed");
    expect(code).toBe(0);
  }, 60_000);

  withRuby("its test block fails for a binary of another version", () => {
    const host = hostTarget()!;
    const stage = tmp("stage");
    writeFileSync(join(stage, "release.tar.gz"), fakeTarball("0.0.0"));
    expect(Bun.spawnSync(["tar", "-xzf", "release.tar.gz"], { cwd: stage }).exitCode).toBe(0);
    const { code, report } = harness(writeTemp(renderFormula({ ...INPUT, version: PKG_VERSION })), host, stage);
    expect(report.test).toStartWith("failed: expected");
    expect(report.test).toContain(`airlock ${PKG_VERSION}`);
    expect(code).toBe(1);
  });
});
