// `airlock setup amp` read by the real Amp CLI (npm @ampcode/cli, pinned in .ci/client-clis.txt:
// the lockfile cannot hold it, see there): `amp
// mcp list` shows the entry setup wrote (user and workspace), and `amp tools list` connects to a
// real daemon with the header it wrote — the user file's literal token, the project file's
// `${AIRLOCK_TOKEN}` expanded by Amp from its environment, once the workspace server is approved
// (`amp mcp approve airlock`) — and lists Airlock's tools; a wrong token is refused. Offline: `amp tools list` needs no model, only some AMP_API_KEY (the account call
// fails without a network and Amp goes on with local settings).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientBin, howToInstall } from "../helpers/client-clis.ts";
import { ROOT, runCli, startDaemon } from "../helpers/daemon.ts";

const AMP = clientBin("amp");
const IN_CI = process.env.CI === "true";
const haveAmp = existsSync(AMP);
if (!haveAmp) console.log(`skipping the Amp CLI e2e: ${AMP} is missing (${howToInstall("@ampcode/cli")})`);

async function amp(args: string[], o: { home: string; cwd: string; token?: string }): Promise<string> {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: o.home, AMP_API_KEY: "offline-test-key", ...(o.token !== undefined ? { AIRLOCK_TOKEN: o.token } : {}) };
  const proc = Bun.spawn([AMP, ...args], { cwd: o.cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(9), 60_000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return out + err;
}

describe.if(haveAmp || IN_CI)("airlock setup amp with the real Amp CLI", () => {
  test("amp reads the user and workspace entries, connects with their tokens and lists Airlock's tools; a wrong token is refused", async () => {
    expect(haveAmp).toBe(true);
    const home = mkdtempSync(join(tmpdir(), "airlock-amp-cli-"));
    const project = mkdtempSync(join(tmpdir(), "airlock-amp-cli-proj-"));
    const d = await startDaemon({ home: join(home, ".airlock") });
    try {
      const env = { HOME: home, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), AIRLOCK_TOKEN: undefined };
      expect((await runCli(["setup", "amp"], env)).code).toBe(0);
      const list = await amp(["mcp", "list"], { home, cwd: home });
      expect(list).toMatch(new RegExp(`Global ~/\\.config/amp/settings\\.json\\n\\s+airlock\\s+url\\s+http://127\\.0\\.0\\.1:${d.port}/`));
      const tools = await amp(["tools", "list"], { home, cwd: home });
      console.log(tools.split("\n").filter((l) => /airlock/i.test(l)).slice(0, 4).join("\n"));
      expect(tools).not.toContain("Error connecting to airlock");
      expect(tools).toMatch(/mcp__airlock__claim_paths/);

      // The workspace entry: Amp expands ${AIRLOCK_TOKEN} from its environment.
      expect((await runCli(["setup", "amp", "--remove"], env)).code).toBe(0);
      expect((await runCli(["setup", "amp", "--project", project], env)).code).toBe(0);
      expect(await amp(["mcp", "list"], { home, cwd: project })).toMatch(/Workspace \.amp\/settings\.json\n\s+airlock\s+url/);
      // Amp runs a workspace's servers only once the user approves each (its security rule).
      expect(await amp(["tools", "list"], { home, cwd: project, token: d.token })).not.toMatch(/mcp__airlock__claim_paths/);
      console.log((await amp(["mcp", "approve", "airlock"], { home, cwd: project })).trim());
      const good = await amp(["tools", "list"], { home, cwd: project, token: d.token });
      expect(good).toMatch(/mcp__airlock__claim_paths/);
      const bad = await amp(["tools", "list"], { home, cwd: project, token: "0".repeat(64) });
      expect(bad).not.toMatch(/mcp__airlock__claim_paths/);
    } finally {
      await d.kill();
    }
  }, 120_000);
});
