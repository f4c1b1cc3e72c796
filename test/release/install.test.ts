// install.sh against a release served over HTTP from 127.0.0.1: the real host binary for the
// main path, stand-in tarballs (a shell script named airlock) for everything else, and stub
// commands on PATH (uname, sysctl, brew, curl) to play other machines.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Target } from "../../release/build.ts";
import { fakeTarball, hostTarget, PKG_VERSION, releaseTarball, removeTmp, ROOT, script, sumsFor, tmp } from "./helpers.ts";

// Each installer run unpacks and checksums the real ~100 MB binary: on a loaded 2-core machine
// that alone took over bun's 5 s default, so each test gets a budget of a minute.
setDefaultTimeout(60_000);

const INSTALL_SH = join(ROOT, "install.sh");
const SYSTEM_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].filter((d) => existsSync(d)).join(":");
const HOST = hostTarget();
if (!HOST) throw new Error(`install.sh tests need a Linux or macOS host on x64 or arm64 (got ${process.platform}-${process.arch})`);
const ASSET = `airlock-${HOST}.tar.gz`;
const FAKE_VERSION = "9.9.9";

// --- a release server: each publish() gets its own folder, /<id>/<file> -------------------------
const releases = new Map<string, Map<string, Uint8Array | string>>();
const requests: string[] = [];
let server: ReturnType<typeof Bun.serve>;
let nextId = 0;

function publish(files: Record<string, Uint8Array | string>): { url: string; id: string } {
  const id = `r${nextId++}`;
  releases.set(id, new Map(Object.entries(files)));
  return { url: `http://127.0.0.1:${server.port}/${id}`, id };
}

function requested(id: string): string[] {
  return requests.filter((p) => p.startsWith(`/${id}/`)).map((p) => p.slice(id.length + 2));
}

let fake: Uint8Array;
let stubs: string; // a `brew` that manages nothing, so a real Homebrew never changes the outcome

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const [, id = "", file = ""] = path.split("/");
      const body = releases.get(id)?.get(file);
      return body === undefined ? new Response("not found", { status: 404 }) : new Response(body);
    },
  });
  fake = fakeTarball(FAKE_VERSION);
  stubs = tmp("stubs");
  script(stubs, "brew", "exit 1");
});

afterAll(() => {
  server.stop(true);
  removeTmp();
});

/** A fake release for any target, with its SHA256SUMS. */
function fakeRelease(extra: Record<string, Uint8Array | string> = {}) {
  const targets = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
  const files = Object.fromEntries(targets.map((t) => [`airlock-${t}.tar.gz`, fake]));
  return publish({ ...files, SHA256SUMS: sumsFor(files), ...extra });
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  out: string;
}

interface RunOptions {
  url?: string;
  env?: Record<string, string>;
  path?: string; // full PATH; default: stubs + the system folders
  home?: string;
  stdin?: string;
  shArgs?: string[];
}

// Async on purpose: a spawnSync would block this process's event loop, and with it the release
// server the installer is downloading from.
async function runInstaller(args: string[], o: RunOptions = {}): Promise<Run & { home: string }> {
  const home = o.home ?? tmp("home");
  const env: Record<string, string> = { HOME: home, PATH: o.path ?? `${stubs}:${SYSTEM_PATH}`, ...o.env };
  if (o.url !== undefined) env.AIRLOCK_RELEASE_URL = o.url;
  const cmd = o.stdin !== undefined ? ["/bin/sh", ...(o.shArgs ?? ["-s", "--"]), ...args] : ["/bin/sh", INSTALL_SH, ...args];
  const p = Bun.spawn(cmd, { env, cwd: home, stdin: o.stdin !== undefined ? new TextEncoder().encode(o.stdin) : "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr, out: stdout + stderr, home };
}

function binVersion(bin: string): string {
  return Bun.spawnSync([bin, "version"], { stdout: "pipe", stderr: "pipe" }).stdout.toString().trim();
}

/** Nothing installed and nothing left behind: no airlock, no partial file. */
function expectNothingInstalled(dir: string): void {
  const left = existsSync(dir) ? readdirSync(dir) : [];
  expect(left).toEqual([]);
}

/** Whether a system command exists; says the test is skipped when it does not. */
function has(command: string): boolean {
  const found = SYSTEM_PATH.split(":").some((d) => existsSync(join(d, command)));
  if (!found) console.warn(`SKIPPED: a test that needs ${command}, which is not installed (apt-get install -y ${command === "shasum" ? "perl" : command})`);
  return found;
}

/** A PATH whose folders hold every system command except `without` (symlinks), plus stubs. */
function pathWithout(without: string[]): string {
  const farm = tmp("farm");
  for (const dir of SYSTEM_PATH.split(":")) {
    for (const name of readdirSync(dir)) {
      if (without.includes(name) || existsSync(join(farm, name))) continue;
      symlinkSync(join(dir, name), join(farm, name));
    }
  }
  return `${stubs}:${farm}`;
}

describe("install.sh with the real binary", () => {
  let real: { url: string; id: string };

  // In a clean clone the tarball is built here first (about 10 s).
  beforeAll(() => {
    const bytes = releaseTarball(HOST);
    real = publish({ [ASSET]: bytes, SHA256SUMS: sumsFor({ [ASSET]: bytes }) });
  }, 60_000);

  test("installs the verified binary for this machine, executable, printing the package version", async () => {
    const home = tmp("home");
    const dir = join(home, "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: real.url, home });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(requested(real.id)).toEqual(["SHA256SUMS", ASSET]);
    expect(readdirSync(dir)).toEqual(["airlock"]);
    expect(statSync(join(dir, "airlock")).mode & 0o777).toBe(0o755);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${PKG_VERSION}`);
    expect(r.stdout).toContain(`Installed airlock ${PKG_VERSION}`);
    expect(existsSync(join(home, ".local"))).toBe(false);
  });

  test("running it twice is fine and says already up to date", async () => {
    const home = tmp("home");
    const dir = join(home, "bin");
    expect((await runInstaller(["--no-service", "--dir", dir], { url: real.url, home })).code).toBe(0);
    const again = await runInstaller(["--no-service", "--dir", dir], { url: real.url, home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already up to date");
    expect(readdirSync(dir)).toEqual(["airlock"]);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${PKG_VERSION}`);
  });

  test("a SHA256SUMS that does not match the tarball installs nothing", async () => {
    const dir = join(tmp("dest"), "bin");
    const bad = publish({ [ASSET]: releases.get(real.id)!.get(ASSET)!, SHA256SUMS: `${"0".repeat(64)}  ${ASSET}\n` });
    const r = await runInstaller(["--no-service", "--dir", dir], { url: bad.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("airlock-install: checksum mismatch");
    expectNothingInstalled(dir);
  });

  test("runs airlock install-service afterwards; its failure is only a warning", async () => {
    const home = tmp("home");
    const dir = join(home, "bin");
    const r = await runInstaller(["--dir", dir], { url: real.url, home, env: { AIRLOCK_SERVICE_DRYRUN: "1" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Running airlock install-service");
    expect(existsSync(join(dir, "airlock"))).toBe(true);
    // The real command may or may not exist in this build; either it ran, or we warned with the
    // command to run by hand. A dry run writes no unit file.
    if (r.stderr.includes("warning")) expect(r.stderr).toContain(`${dir}/airlock install-service`);
    expect(existsSync(join(home, ".config/systemd/user/airlock.service"))).toBe(false);
  });
});

describe("checksums fail closed", () => {
  test("a tampered tarball is refused and nothing is installed", async () => {
    const tampered = new Uint8Array(fake);
    tampered[tampered.length - 5]! ^= 0xff;
    const rel = publish({ [ASSET]: tampered, SHA256SUMS: sumsFor({ [ASSET]: fake }) });
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("checksum mismatch");
    expectNothingInstalled(dir);
  });

  test("a SHA256SUMS without a line for this tarball is refused", async () => {
    const other = "airlock-plan9-mips.tar.gz";
    const rel = publish({ [ASSET]: fake, SHA256SUMS: sumsFor({ [other]: fake }) });
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`SHA256SUMS has no checksum for ${ASSET}`);
    expectNothingInstalled(dir);
  });

  test("a missing SHA256SUMS is refused before the tarball is fetched", async () => {
    const rel = publish({ [ASSET]: fake });
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("could not download");
    expect(requested(rel.id)).toEqual(["SHA256SUMS"]);
    expectNothingInstalled(dir);
  });

  test.each([
    ["a short checksum", (h: string) => `${h.slice(0, 63)}  ${ASSET}\n`],
    ["a non-hex checksum", (h: string) => `${"g".repeat(64)}  ${ASSET}\n${h}  other.tar.gz\n`],
    ["two lines for the tarball", (h: string) => `${h}  ${ASSET}\n${"0".repeat(64)}  ${ASSET}\n`],
  ])("%s is refused", async (_name, sums) => {
    const good = sumsFor({ [ASSET]: fake }).split(" ")[0]!;
    const rel = publish({ [ASSET]: fake, SHA256SUMS: sums(good) });
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/airlock-install: SHA256SUMS has a malformed .*checksum/);
    expectNothingInstalled(dir);
  });

  test("uppercase hex and sha256sum's binary-mode '*' marker are accepted", async () => {
    const h = sumsFor({ [ASSET]: fake }).split(" ")[0]!.toUpperCase();
    const rel = publish({ [ASSET]: fake, SHA256SUMS: `${h} *${ASSET}\r\n` });
    const dir = join(tmp("dest"), "bin");
    expect((await runInstaller(["--no-service", "--dir", dir], { url: rel.url })).code).toBe(0);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${FAKE_VERSION}`);
  });

  // Each tool alone must both accept the right checksum and refuse a wrong one.
  test.each(
    [
      ["sha256sum", ["shasum", "openssl"]],
      ["shasum", ["sha256sum", "openssl"]],
      ["openssl", ["sha256sum", "shasum"]],
    ].filter(([tool]) => has(tool as string)) as [string, string[]][],
  )("with only %s it verifies and refuses", async (_tool, hide) => {
    const path = pathWithout(hide);
    const good = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const ok = await runInstaller(["--no-service", "--dir", dir], { url: good.url, path });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${FAKE_VERSION}`);

    const bad = publish({ [ASSET]: fake, SHA256SUMS: `${"ab".repeat(32)}  ${ASSET}\n` });
    const dir2 = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir2], { url: bad.url, path });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("checksum mismatch");
    expectNothingInstalled(dir2);
  });

  test("with no SHA-256 tool at all it refuses", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url, path: pathWithout(["sha256sum", "shasum", "openssl"]) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("no SHA-256 tool found");
    expect(r.stderr).toContain("checksum");
    expectNothingInstalled(dir);
  });
});

describe("where and how it installs", () => {
  test("installs into ~/.local/bin by default, $AIRLOCK_INSTALL_DIR if set, --dir above both", async () => {
    const rel = fakeRelease();
    const a = await runInstaller(["--no-service"], { url: rel.url });
    expect(a.code).toBe(0);
    expect(binVersion(join(a.home, ".local/bin/airlock"))).toBe(`airlock ${FAKE_VERSION}`);

    const envDir = join(tmp("env"), "tools");
    const b = await runInstaller(["--no-service"], { url: rel.url, env: { AIRLOCK_INSTALL_DIR: envDir } });
    expect(b.code).toBe(0);
    expect(readdirSync(envDir)).toEqual(["airlock"]);
    expect(existsSync(join(b.home, ".local"))).toBe(false);

    const flagDir = join(tmp("flag"), "bin");
    const c = await runInstaller(["--no-service", `--dir=${flagDir}`], { url: rel.url, env: { AIRLOCK_INSTALL_DIR: envDir + "-unused" } });
    expect(c.code).toBe(0);
    expect(readdirSync(flagDir)).toEqual(["airlock"]);
    expect(existsSync(envDir + "-unused")).toBe(false);
  });

  test("says how to add the folder to PATH for sh/bash/zsh and fish, only when it is missing", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const off = await runInstaller(["--no-service", "--dir", dir], { url: rel.url });
    expect(off.code).toBe(0);
    expect(off.stdout).toContain(`${dir} is not on your PATH`);
    expect(off.stdout).toContain(`export PATH="${dir}:$PATH"`);
    expect(off.stdout).toContain(`fish_add_path ${dir}`);

    const on = await runInstaller(["--no-service", "--dir", dir], { url: rel.url, path: `${stubs}:${dir}:${SYSTEM_PATH}` });
    expect(on.code).toBe(0);
    expect(on.stdout).not.toContain("not on your PATH");
    expect(on.out).not.toContain("another airlock");
  });

  test("warns when another airlock comes first on PATH", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const other = tmp("other");
    script(other, "airlock", "echo airlock 0.0.1");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url, path: `${stubs}:${other}:${dir}:${SYSTEM_PATH}` });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`another airlock at ${other}/airlock comes first on your PATH`);
  });

  test("replaces an older version atomically and reports the upgrade", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    script(dir, "airlock", "echo airlock 0.0.1");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Upgraded airlock 0.0.1 -> airlock ${FAKE_VERSION}`);
    expect(readdirSync(dir)).toEqual(["airlock"]);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${FAKE_VERSION}`);
  });

  test("--version refuses a download of another version and accepts its own (with or without v)", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const wrong = await runInstaller(["--no-service", "--dir", dir, "--version", "1.2.3"], { url: rel.url });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain(`asked for airlock 1.2.3 but the download is airlock ${FAKE_VERSION}`);
    expectNothingInstalled(dir);
    expect((await runInstaller(["--no-service", "--dir", dir, "--version", `v${FAKE_VERSION}`], { url: rel.url })).code).toBe(0);
    expect((await runInstaller(["--no-service", "--dir", dir, `--version=${FAKE_VERSION}`], { url: rel.url })).code).toBe(0);
  });

  test("downloads from GitHub's latest release by default and from vVERSION with --version", async () => {
    const log = join(tmp("curl"), "args");
    const fakes = tmp("fakes");
    script(fakes, "curl", `echo "$@" >>"${log}"; exit 22`);
    const path = `${stubs}:${fakes}:${SYSTEM_PATH}`;
    const latest = await runInstaller(["--no-service", "--dir", join(tmp("dest"), "bin")], { path });
    expect(latest.code).not.toBe(0);
    const tagged = await runInstaller(["--no-service", "--dir", join(tmp("dest"), "bin"), "--version", "0.2.0"], { path });
    expect(tagged.code).not.toBe(0);
    const calls = readFileSync(log, "utf8").trim().split("\n");
    expect(calls[0]).toEndWith(" https://github.com/airlock-dev/airlock/releases/latest/download/SHA256SUMS");
    expect(calls[1]).toEndWith(" https://github.com/airlock-dev/airlock/releases/download/v0.2.0/SHA256SUMS");
    expect(calls).toHaveLength(2);
  });

  test("takes a mirror URL with a trailing slash, or a local folder as file:// or a plain path", async () => {
    const folder = tmp("mirror");
    const files = { [ASSET]: fake };
    writeFileSync(join(folder, ASSET), fake);
    writeFileSync(join(folder, "SHA256SUMS"), sumsFor(files));
    const mirror = fakeRelease();
    for (const url of [`${mirror.url}/`, `file://${folder}`, `${folder}/`]) {
      const dir = join(tmp("dest"), "bin");
      const r = await runInstaller(["--no-service", "--dir", dir], { url });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${FAKE_VERSION}`);
    }
  });

  test.skipIf(!has("wget"))("uses wget when curl is missing (HTTP and file://), and fails clearly with neither", async () => {
    const noCurl = pathWithout(["curl"]);
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url, path: noCurl });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${FAKE_VERSION}`);

    const folder = tmp("mirror");
    writeFileSync(join(folder, ASSET), fake);
    writeFileSync(join(folder, "SHA256SUMS"), sumsFor({ [ASSET]: fake }));
    const dir2 = join(tmp("dest"), "bin");
    expect((await runInstaller(["--no-service", "--dir", dir2], { url: `file://${folder}`, path: noCurl })).code).toBe(0);
    expect(existsSync(join(dir2, "airlock"))).toBe(true);

    const dir3 = join(tmp("dest"), "bin");
    const none = await runInstaller(["--no-service", "--dir", dir3], { url: rel.url, path: pathWithout(["curl", "wget"]) });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain("airlock-install: neither curl nor wget was found");
    expectNothingInstalled(dir3);
  });

  test("refuses a tarball without an airlock binary in it", async () => {
    const empty = Bun.spawnSync(["sh", "-c", `cd "${tmp("empty")}" && touch other && tar -czf - other`]).stdout;
    const bytes = new Uint8Array(empty);
    const rel = publish({ [ASSET]: bytes, SHA256SUMS: sumsFor({ [ASSET]: bytes }) });
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("does not contain an airlock binary");
    expectNothingInstalled(dir);
  });
});

describe("platform detection", () => {
  /** uname stub printing s and m; a sysctl stub answering proc_translated ("unset": it fails). */
  function unameStubs(s: string, m: string, translated = "unset"): string {
    const dir = tmp("uname");
    script(dir, "uname", `case "$1" in -m) echo ${m} ;; *) echo ${s} ;; esac`);
    script(dir, "sysctl", translated === "unset" ? "exit 1" : `echo ${translated}`);
    return `${stubs}:${dir}:${SYSTEM_PATH}`;
  }

  test.each<[string, string, string, Target]>([
    ["Linux", "x86_64", "unset", "linux-x64"],
    ["Linux", "amd64", "unset", "linux-x64"],
    ["Linux", "aarch64", "unset", "linux-arm64"],
    ["Linux", "arm64", "unset", "linux-arm64"],
    ["Darwin", "arm64", "unset", "darwin-arm64"],
    ["Darwin", "x86_64", "0", "darwin-x64"],
    ["Darwin", "x86_64", "unset", "darwin-x64"],
    ["Darwin", "x86_64", "1", "darwin-arm64"], // Rosetta 2 on Apple silicon
  ])("%s %s (proc_translated %s) downloads %s", async (s, m, translated, target) => {
    const rel = fakeRelease();
    const r = await runInstaller(["--no-service", "--dir", join(tmp("dest"), "bin")], { url: rel.url, path: unameStubs(s, m, translated) });
    expect(r.code).toBe(0);
    expect(requested(rel.id)).toEqual(["SHA256SUMS", `airlock-${target}.tar.gz`]);
  });

  test.each([
    ["FreeBSD", "amd64", "unsupported operating system: FreeBSD"],
    ["MINGW64_NT-10.0", "x86_64", "unsupported operating system: MINGW64_NT-10.0"],
    ["Linux", "armv7l", "unsupported CPU architecture: armv7l"],
    ["Linux", "i686", "unsupported CPU architecture: i686"],
  ])("%s %s is a clear error and downloads nothing", async (s, m, message) => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url, path: unameStubs(s, m) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`airlock-install: ${message}`);
    expect(requested(rel.id)).toEqual([]);
    expectNothingInstalled(dir);
  });
});

describe("Homebrew and the service", () => {
  test("stops without installing when Homebrew manages airlock", async () => {
    const brewStubs = tmp("brew");
    script(brewStubs, "brew", `[ "$*" = "list --formula airlock" ] && exit 0; exit 1`);
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--dir", dir], { url: rel.url, path: `${brewStubs}:${SYSTEM_PATH}` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("brew upgrade airlock");
    expect(requested(rel.id)).toEqual([]);
    expectNothingInstalled(dir);
  });

  test("runs airlock install-service once, after the binary is in place, passing the environment", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const log = join(tmp("log"), "calls");
    const r = await runInstaller(["--dir", dir], { url: rel.url, env: { FAKE_AIRLOCK_LOG: log, AIRLOCK_SERVICE_DRYRUN: "1" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("service installed");
    // version for the new binary (before the move), then install-service on the installed one
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["version dryrun=1", "install-service dryrun=1"]);
  });

  test("--no-service and AIRLOCK_NO_SERVICE=1 skip it and say how to run it later", async () => {
    const rel = fakeRelease();
    const ways: { args: string[]; env: Record<string, string> }[] = [
      { args: ["--no-service"], env: {} },
      { args: [], env: { AIRLOCK_NO_SERVICE: "1" } },
    ];
    for (const o of ways) {
      const dir = join(tmp("dest"), "bin");
      const log = join(tmp("log"), "calls");
      const r = await runInstaller([...o.args, "--dir", dir], { url: rel.url, env: { ...o.env, FAKE_AIRLOCK_LOG: log } });
      expect(r.code).toBe(0);
      expect(readFileSync(log, "utf8")).not.toContain("install-service");
      expect(r.stdout).toContain(`${dir}/airlock install-service`);
    }
  });

  test("a failing install-service is a warning with the manual command, not a failed install", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--dir", dir], { url: rel.url, env: { FAKE_SERVICE_FAIL: "1" } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("service setup broke");
    expect(r.stderr).toContain(`airlock-install: warning: airlock install-service failed; the binary is installed. Set up the service yourself with: ${dir}/airlock install-service`);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${FAKE_VERSION}`);
  });
});

describe("the script itself", () => {
  const source = readFileSync(INSTALL_SH, "utf8");

  const shellcheck = Bun.which("shellcheck");
  if (!shellcheck) console.warn("SKIPPED: the shellcheck test; shellcheck not found (apt-get install -y shellcheck)");
  test.skipIf(!shellcheck)("is shellcheck-clean", () => {
    const r = Bun.spawnSync([shellcheck!, "--shell=sh", INSTALL_SH], { stdout: "pipe", stderr: "pipe" });
    expect(r.stdout.toString() + r.stderr.toString()).toBe("");
    expect(r.exitCode).toBe(0);
  });

  test("works piped into sh, with flags after -s --", async () => {
    const rel = fakeRelease();
    const dir = join(tmp("dest"), "bin");
    const r = await runInstaller(["--no-service", "--dir", dir], { url: rel.url, stdin: source });
    expect(r.code).toBe(0);
    expect(binVersion(join(dir, "airlock"))).toBe(`airlock ${FAKE_VERSION}`);
  });

  test("a download cut short anywhere runs nothing", async () => {
    expect(source.trimEnd().endsWith('\nmain "$@"')).toBe(true);
    const rel = fakeRelease();
    const lastLine = source.trimEnd().lastIndexOf("\n");
    const cuts = [0.1, 0.3, 0.5, 0.7, 0.9, 0.99].map((f) => Math.floor(source.length * f)).concat([lastLine]);
    for (const cut of cuts) {
      const home = tmp("home");
      await runInstaller([], { url: rel.url, home, stdin: source.slice(0, cut), shArgs: ["-s", "--"] });
      expect(readdirSync(home)).toEqual([]);
    }
    expect(requested(rel.id)).toEqual([]);
  });

  test("--help prints usage and does nothing else; an unknown flag is an error", async () => {
    const rel = fakeRelease();
    const help = await runInstaller(["--help"], { url: rel.url });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: install.sh");
    expect(help.stdout).toContain("--no-service");
    expect(readdirSync(help.home)).toEqual([]);
    const bad = await runInstaller(["--frobnicate"], { url: rel.url });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toBe("airlock-install: unknown option: --frobnicate (see --help)\n");
    expect(requested(rel.id)).toEqual([]);
  });
});
