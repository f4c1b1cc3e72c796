// The compiled binary is a product of its own: it carries package.json's version and ignores
// the .env and bunfig.toml of whatever folder the user happens to run it in.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostTarget, PKG_VERSION, releaseTarball, removeTmp, tmp } from "./helpers.ts";

let bin: string;
beforeAll(() => {
  const target = hostTarget();
  if (!target) throw new Error(`no release target for ${process.platform}-${process.arch}`);
  const dir = tmp("bin");
  writeFileSync(join(dir, "airlock.tar.gz"), releaseTarball(target));
  expect(Bun.spawnSync(["tar", "-xzf", "airlock.tar.gz"], { cwd: dir }).exitCode).toBe(0);
  bin = join(dir, "airlock");
  chmodSync(bin, 0o755);
}, 60_000);
afterAll(() => removeTmp());

describe("the compiled binary", () => {
  test("reports package.json's version", () => {
    const r = Bun.spawnSync([bin, "version"]);
    expect(r.stdout.toString().trim()).toBe(`airlock ${PKG_VERSION}`);
  });

  test("does not read .env or bunfig.toml from the folder it is run in", () => {
    const cwd = tmp("cwd");
    writeFileSync(join(cwd, ".env"), "AIRLOCK_PORT=12345\n");
    writeFileSync(join(cwd, "evil.ts"), 'console.log("PRELOADED FROM CWD");\n');
    writeFileSync(join(cwd, "bunfig.toml"), 'preload = ["./evil.ts"]\n');
    const env = { ...process.env };
    delete env.AIRLOCK_PORT;
    const r = Bun.spawnSync([bin, "token"], { cwd, env });
    const out = r.stdout.toString() + r.stderr.toString();
    expect(r.exitCode).toBe(0);
    expect(out).toContain("http://localhost:27183"); // the default port, not the .env's 12345
    expect(out).not.toContain("12345");
    expect(out).not.toContain("PRELOADED FROM CWD");
    // The same folder does affect plain bun, so the test would notice if the flags stopped working.
    const plain = Bun.spawnSync([process.execPath, "-e", "console.log(process.env.AIRLOCK_PORT)"], { cwd, env });
    expect(plain.stdout.toString()).toContain("PRELOADED FROM CWD");
    expect(plain.stdout.toString()).toContain("12345");
  });
});
