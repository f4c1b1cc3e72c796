// Release build: `bun build --compile` of src/main.ts for each target, packed as
// release/out/airlock-<os>-<arch>.tar.gz (one file inside, `airlock`), plus SHA256SUMS.
//   bun release/build.ts                      all four targets
//   bun release/build.ts --target linux-x64   just one
//   bun release/build.ts --target linux-x64 --no-archive   only release/out/<target>/airlock
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

export const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;
export type Target = (typeof TARGETS)[number];

const ROOT = resolve(import.meta.dir, "..");
export const OUT = join(ROOT, "release/out");

function run(cmd: string[], cwd = ROOT): void {
  const r = Bun.spawnSync(cmd, { cwd, stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} exited with ${r.exitCode}`);
}

export function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Compiles one target into release/out/<target>/airlock and returns its path. */
export function compile(target: Target): string {
  const dir = join(OUT, target);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, "airlock");
  run([
    process.execPath,
    "build",
    "--compile",
    `--target=bun-${target}`,
    // The binary must not pick up .env or bunfig.toml from whatever folder the user runs it in.
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    "--minify-syntax",
    "--sourcemap=none",
    join(ROOT, "src/main.ts"),
    "--outfile",
    outfile,
  ]);
  return outfile;
}

export function archive(target: Target): string {
  const tarball = join(OUT, `airlock-${target}.tar.gz`);
  run(["tar", "-czf", tarball, "-C", join(OUT, target), "airlock"]);
  return tarball;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { target: { type: "string", multiple: true }, "no-archive": { type: "boolean" } } });
  const targets = (values.target ?? [...TARGETS]) as Target[];
  for (const t of targets) if (!TARGETS.includes(t)) throw new Error(`unknown target ${t}; use one of ${TARGETS.join(", ")}`);
  mkdirSync(OUT, { recursive: true });
  for (const t of targets) {
    const bin = compile(t);
    console.log(`built ${values["no-archive"] ? bin : archive(t)}`);
  }
  writeSums();
}

/** SHA256SUMS (sha256sum format) over every tarball in release/out, so partial builds add up. */
export function writeSums(): string {
  const tarballs = readdirSync(OUT).filter((f) => /^airlock-.+\.tar\.gz$/.test(f)).sort();
  const text = tarballs.map((f) => `${sha256(join(OUT, f))}  ${f}\n`).join("");
  writeFileSync(join(OUT, "SHA256SUMS"), text);
  return text;
}
