import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { daemonCommand, type DaemonProcess, ROOT, runCli, sqliteOnly, startDaemon } from "../helpers/daemon.ts";
import { freePort } from "../helpers/until.ts";

setDefaultTimeout(20_000);

let d: DaemonProcess;
let env: Record<string, string>;
beforeAll(async () => {
  d = await startDaemon();
  // HOME decides where doctor looks for the service files: an empty one has none.
  env = { AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), HOME: dirname(d.home) };
});
afterAll(async () => {
  await d.kill();
});

describe("airlock doctor", () => {
  sqliteOnly("with a healthy daemon it reports the version answering, a private token and a sound database, and exits 0", async () => {
    const r = await runCli(["doctor"], env);
    expect(r.stdout).toContain(`answers on 127.0.0.1:${d.port}`);
    expect(r.stdout).toMatch(/ok +token file .*token is private \(0600\), 64 characters/);
    expect(r.stdout).toMatch(/ok +database .*state\.db passes quick_check/);
    expect(r.stdout).toContain("no systemd user service is installed");
    expect(r.stdout).not.toContain("FAIL");
    expect(r.code).toBe(0);
  });

  test("says what to fix and exits 1 when nothing listens and the token file is open to others", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-doctor-"));
    const airlockHome = join(home, ".airlock");
    await Bun.write(join(airlockHome, "token"), "f".repeat(64));
    chmodSync(join(airlockHome, "token"), 0o644);
    const port = await freePort();
    const r = await runCli(["doctor"], { AIRLOCK_HOME: airlockHome, AIRLOCK_PORT: String(port), HOME: home });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`FAIL  nothing listens on 127.0.0.1:${port}`);
    expect(r.stdout).toContain("→ airlock install-service, or airlock daemon");
    expect(r.stdout).toMatch(/FAIL +the token file .* is readable by other users .*chmod 600/);
  });
});

describe("airlock watch", () => {
  test("redraws the status with the live lock holders and waiters until stopped", async () => {
    const held = await d.call("lock_resource", { name: "watched", agent_id: "holder" });
    expect(held.locked).toBe(true);
    const waiting = d.call("lock_resource", { name: "watched", agent_id: "queued", wait_seconds: 10 });
    const proc = Bun.spawn([...daemonCommand(), "watch", "--interval", "0.2"], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
    let out = "";
    const deadline = Date.now() + 8_000;
    const reader = proc.stdout.getReader();
    while (Date.now() < deadline && (out.match(/\x1b\[2J/g) ?? []).length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    proc.kill();
    await proc.exited;
    expect((out.match(/\x1b\[2J/g) ?? []).length).toBeGreaterThanOrEqual(3); // it redraws
    expect(out).toContain("watched  held by holder");
    expect(out).toContain("1 waiting: queued");
    await d.call("unlock_resource", { name: "watched", lock_token: held.lock_token });
    expect((await waiting).locked).toBe(true);
  });
});
