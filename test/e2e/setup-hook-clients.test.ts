// `airlock setup` for Copilot CLI, Cline and Kiro against a real daemon, then `airlock doctor`:
// every part in place, the hook commands run, the entry reaches this daemon with an accepted token
// (Copilot's `${AIRLOCK_TOKEN}` resolved from this shell, Cline's and Kiro's literal token), Kiro's
// `@airlock` rule; a hook missing (a Cline hook file deleted) fails with the fix. Then the real
// Copilot CLI (a pinned dev dependency) and the real Cline CLI (pinned in .ci/client-clis.txt) read
// the entry setup wrote.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientBin } from "../helpers/client-clis.ts";
import { ROOT, runCli, startDaemon } from "../helpers/daemon.ts";

const COPILOT = join(ROOT, "node_modules", ".bin", "copilot");
const CLINE = clientBin("cline"); // not in the lockfile: .ci/client-clis.txt

/** A client CLI's own command in the temporary HOME, offline, bounded. */
async function clientSays(cmd: string[], env: Record<string, string>): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: env.HOME, env: { ...process.env, ...env, COPILOT_OFFLINE: "true", COPILOT_AUTO_UPDATE: "false" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(9), 60_000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return `${out}${err}`;
}

describe("airlock setup copilot-cli, cline, kiro, then airlock doctor", () => {
  test("doctor finds each set up and reaching this daemon; a missing Cline hook fails with the fix", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-hookclients-"));
    const d = await startDaemon({ home: join(home, ".airlock") });
    try {
      const token = readFileSync(join(d.home, "token"), "utf8").trim();
      const env = { HOME: home, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), AIRLOCK_TOKEN: token, XDG_CONFIG_HOME: join(home, ".config") };
      for (const c of ["copilot-cli", "cline", "kiro"]) {
        const r = await runCli(["setup", c], env);
        expect(r.code, r.stderr).toBe(0);
      }
      const good = await runCli(["doctor"], env, 60_000);
      for (const name of ["GitHub Copilot CLI", "Cline", "Kiro"]) {
        expect(good.stdout).toMatch(new RegExp(`ok {4}${name}: [^\\n]*hooks[^\\n]* in place`));
        expect(good.stdout).toMatch(new RegExp(`ok {4}${name}: hook command \`.*\` runs \\(airlock `));
        expect(good.stdout).toContain(`ok    ${name}: reaches the daemon at http://127.0.0.1:${d.port}/`);
        expect(good.stdout).toContain(`ok    ${name}: the daemon accepts the token it sends`);
      }
      expect(good.stdout).toContain("ok    Kiro: allowedTools has @airlock");
      expect(good.stdout).not.toContain("no hook for");

      rmSync(join(home, "Documents", "Cline", "Hooks", "PreToolUse"));
      const bad = await runCli(["doctor"], env, 60_000);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain("FAIL  Cline: no hook for pre-edit (an older setup?)");
      expect(bad.stdout).toContain("→ airlock setup cline");

      // A wrong token in this shell: Copilot sends what it resolves, and doctor says it is refused.
      const wrong = await runCli(["doctor"], { ...env, AIRLOCK_TOKEN: "0".repeat(64) }, 60_000);
      expect(wrong.stdout).toContain("FAIL  GitHub Copilot CLI: the daemon refuses its token (401)");
    } finally {
      await d.kill();
    }
  }, 120_000);

  test.skipIf(!existsSync(COPILOT) && process.env.CI !== "true")("the real Copilot CLI reads the entry setup wrote (copilot mcp get, offline), and not after --remove", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-copilot-e2e-"));
    const env = { HOME: home, AIRLOCK_HOME: join(home, ".airlock"), AIRLOCK_PORT: "27199" };
    expect((await runCli(["setup", "copilot-cli"], env)).code).toBe(0);
    const get = () => clientSays([COPILOT, "mcp", "get", "airlock", "--show-secrets"], env);
    const out = await get();
    expect(out).toContain("Type: http");
    expect(out).toContain("URL: http://127.0.0.1:27199/");
    expect(out).toContain("Authorization: Bearer ${AIRLOCK_TOKEN}");
    expect(out).toContain("Source: User");
    expect((await runCli(["setup", "copilot-cli", "--remove"], env)).code).toBe(0);
    expect(await get()).not.toContain("URL: http://127.0.0.1:27199/");
  }, 120_000);

  test.skipIf(!existsSync(CLINE) && process.env.CI !== "true")("the real Cline CLI lists the server setup wrote (cline config mcp), and not after --remove", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-cline-e2e-"));
    const env = { HOME: home, AIRLOCK_HOME: join(home, ".airlock"), AIRLOCK_PORT: "27199" };
    expect((await runCli(["setup", "cline"], env)).code).toBe(0);
    const out = await clientSays([CLINE, "config", "mcp"], env);
    expect(out).toContain(`Configured MCP servers (${join(home, ".cline", "data", "settings", "cline_mcp_settings.json")})`);
    expect(out).toContain("airlock [streamableHttp]");
    expect((await runCli(["setup", "cline", "--remove"], env)).code).toBe(0);
    expect(await clientSays([CLINE, "config", "mcp"], env)).not.toContain("airlock [streamableHttp]");
  }, 120_000);
});
