// The real thing: a real daemon, `airlock setup claude-code` in a temporary HOME, then the real
// Claude Code CLI (`claude mcp list`, which health-checks every server and needs no API key)
// must report the airlock server as connected: the URL, the transport and the headersHelper that
// reads the token at connect time all work as written. A wrong token must fail, so "connected"
// is proof the header was sent.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runCli, startDaemon } from "../helpers/daemon.ts";

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const haveClaude = existsSync(CLAUDE);
if (!haveClaude) console.log(`skipping the Claude Code e2e: ${CLAUDE} is missing (npm install -D @anthropic-ai/claude-code)`);

async function claudeMcpList(home: string, extra: Record<string, string> = {}): Promise<string> {
  const env: Record<string, string | undefined> = { ...process.env, HOME: home, DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", ...extra };
  for (const k of Object.keys(env)) {
    if (k.startsWith("ANTHROPIC_") || (k === "CLAUDE_CONFIG_DIR" && !extra.CLAUDE_CONFIG_DIR) || (k === "AIRLOCK_TOKEN" && !extra.AIRLOCK_TOKEN)) delete env[k];
  }
  const proc = Bun.spawn([CLAUDE, "mcp", "list"], { cwd: home, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(9), 60_000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return out + err;
}

describe("airlock setup claude-code with the real Claude Code CLI", () => {
  test.skipIf(!haveClaude)(
    "claude mcp list reports the airlock server as connected",
    async () => {
      const home = mkdtempSync(join(tmpdir(), "airlock-claude-"));
      const d = await startDaemon({ home: join(home, ".airlock") });
      try {
        const env = { HOME: home, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port) };
        const setup = await runCli(["setup", "claude-code"], env);
        expect(setup.code).toBe(0);

        const out = await claudeMcpList(home);
        const line = out.split("\n").find((l) => l.startsWith("airlock:")) ?? "";
        console.log(`claude mcp list: ${line}`);
        expect(line).toBe(`airlock: http://127.0.0.1:${d.port}/ (HTTP) - ✔ Connected`);

        // The same entry with a wrong token is refused: the header really is what connects it.
        const wrong = await claudeMcpList(home, { AIRLOCK_TOKEN: "0".repeat(64) });
        expect(wrong).toContain("airlock:");
        expect(wrong).not.toContain("✔ Connected");

        // And --remove takes it away again.
        expect((await runCli(["setup", "claude-code", "--remove"], env)).code).toBe(0);
        expect(await claudeMcpList(home)).not.toContain("airlock:");

        // With CLAUDE_CONFIG_DIR set, setup writes where Claude Code then reads.
        const configDir = join(home, "claude-config");
        expect((await runCli(["setup", "claude-code"], { ...env, CLAUDE_CONFIG_DIR: configDir })).code).toBe(0);
        const relocated = await claudeMcpList(home, { CLAUDE_CONFIG_DIR: configDir });
        expect(relocated.split("\n").find((l) => l.startsWith("airlock:"))).toBe(`airlock: http://127.0.0.1:${d.port}/ (HTTP) - ✔ Connected`);
        expect(await claudeMcpList(home)).not.toContain("airlock:"); // and not in the default place
      } finally {
        await d.kill();
      }
    },
    120_000,
  );
});
