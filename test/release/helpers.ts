// Shared by the release tests: the host's release target, a verified copy of its tarball from
// release/out (built on demand), and stand-in `airlock` tarballs that are fast to install.
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Target } from "../../release/build.ts";

export const ROOT = resolve(import.meta.dir, "../..");
export const OUT = join(ROOT, "release/out");
export const PKG_VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

// Every temporary folder lives under one root that each test file removes in afterAll (bun test
// fires no process "exit" handlers in test files): the installs copy a ~100 MB binary each,
// which must not pile up in /tmp.
const TMP_ROOT = join(tmpdir(), `airlock-release-${process.pid}`);

export function tmp(prefix: string): string {
  mkdirSync(TMP_ROOT, { recursive: true });
  return mkdtempSync(join(TMP_ROOT, `${prefix}-`));
}

export function removeTmp(): void {
  rmSync(TMP_ROOT, { recursive: true, force: true });
}

/** The release target this machine installs, or null where Airlock ships no binary. */
export function hostTarget(): Target | null {
  const os = process.platform === "linux" ? "linux" : process.platform === "darwin" ? "darwin" : null;
  const arch = process.arch === "x64" ? "x64" : process.arch === "arm64" ? "arm64" : null;
  return os && arch ? (`${os}-${arch}` as Target) : null;
}

function sumsLine(sums: string, file: string): string | undefined {
  return sums
    .split("\n")
    .map((l) => l.split(/\s+\*?/))
    .find(([, f]) => f === file)?.[0];
}

/**
 * The host's tarball from release/out, checked against release/out/SHA256SUMS. Other sessions
 * may be rebuilding release/out while we read it, so a mismatch is retried before we build the
 * target ourselves (bun release/build.ts --target T, ~10 s).
 */
export function releaseTarball(target: Target): Uint8Array {
  const file = `airlock-${target}.tar.gz`;
  for (let attempt = 0; attempt < 6; attempt++) {
    const tarball = join(OUT, file);
    const sums = join(OUT, "SHA256SUMS");
    if (attempt === 5 || !existsSync(tarball) || !existsSync(sums)) {
      const r = Bun.spawnSync([process.execPath, join(ROOT, "release/build.ts"), "--target", target], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(`bun release/build.ts --target ${target} failed: ${r.stderr.toString()}`);
    }
    const bytes = new Uint8Array(readFileSync(tarball));
    if (sumsLine(readFileSync(sums, "utf8"), file) === sha256Hex(bytes)) return bytes;
    Bun.sleepSync(2000);
  }
  throw new Error(`release/out/${file} never matched release/out/SHA256SUMS; rebuild with bun release/build.ts`);
}

/**
 * A tarball holding a stand-in `airlock` (a shell script) that prints `airlock VERSION` and,
 * when FAKE_AIRLOCK_LOG is set, appends each invocation there. `install-service` exits 3 when
 * FAKE_SERVICE_FAIL is set.
 */
export function fakeTarball(version: string): Uint8Array {
  const dir = tmp("fake");
  const script = `#!/bin/sh
if [ -n "\${FAKE_AIRLOCK_LOG:-}" ]; then
  echo "$* dryrun=\${AIRLOCK_SERVICE_DRYRUN:-}" >>"$FAKE_AIRLOCK_LOG"
fi
case "$1" in
  version) echo "airlock ${version}" ;;
  install-service)
    if [ -n "\${FAKE_SERVICE_FAIL:-}" ]; then echo "service setup broke" >&2; exit 3; fi
    echo "service installed" ;;
esac
`;
  mkdirSync(join(dir, "stage"));
  writeFileSync(join(dir, "stage/airlock"), script);
  chmodSync(join(dir, "stage/airlock"), 0o755);
  const r = Bun.spawnSync(["tar", "-czf", join(dir, "fake.tar.gz"), "-C", join(dir, "stage"), "airlock"]);
  if (r.exitCode !== 0) throw new Error(`tar failed: ${r.stderr.toString()}`);
  return new Uint8Array(readFileSync(join(dir, "fake.tar.gz")));
}

/** SHA256SUMS text (sha256sum format) for the given files. */
export function sumsFor(files: Record<string, Uint8Array>): string {
  return Object.entries(files)
    .map(([name, bytes]) => `${sha256Hex(bytes)}  ${name}\n`)
    .join("");
}

/** Writes an executable script into dir/name. */
export function script(dir: string, name: string, body: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}
