// The six config-only clients of issue 20 (roo-code, goose, zed, continue, amp, warp) against a
// real daemon, through the CLI in a temporary HOME: bare `airlock setup` lists every client, one
// line each, found or not, and what is installed; setup writes each; doctor reaches the daemon
// with the token each entry sends (a project entry's ${AIRLOCK_TOKEN} resolved from this shell,
// a wrong one refused); --remove takes everything out again. None of these clients has a CLI on
// npm that reads its config offline (docs/clients.md), so doctor's test call is the connection.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLIENTS } from "../../src/clients/index.ts";
import { daemonCommand, runCli, startDaemon } from "../helpers/daemon.ts";

const IDS = ["roo-code", "goose", "zed", "continue", "amp", "warp"] as const;
const NAMES: Record<(typeof IDS)[number], string> = { "roo-code": "Roo Code", goose: "goose", zed: "Zed", continue: "Continue", amp: "Amp", warp: "Warp" };

/** Bare `airlock setup`: one line per client, keyed by id. */
function listing(stdout: string): Map<string, string> {
  const lines = stdout.split("\n").filter((l) => /^\S+ +(found|not found)/.test(l));
  return new Map(lines.map((l) => [l.split(/\s+/)[0]!, l]));
}

async function inDir(cwd: string, args: string[], env: Record<string, string | undefined>) {
  const proc = Bun.spawn([...daemonCommand(), ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("airlock setup for roo-code, goose, zed, continue, amp, warp", () => {
  test("bare setup lists every client; each setup is accepted by the daemon through doctor; --remove lists them as not set up", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-cfgclients-"));
    const d = await startDaemon({ home: join(home, ".airlock") });
    try {
      const env = { HOME: home, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), XDG_CONFIG_HOME: join(home, ".config"), AIRLOCK_TOKEN: undefined, PATH: "/usr/bin:/bin" };
      const before = await runCli(["setup"], env);
      expect(before.code).toBe(0);
      const rows = listing(before.stdout);
      expect([...rows.keys()]).toEqual(CLIENTS.map((c) => c.id));
      for (const id of IDS) expect(rows.get(id)).toMatch(new RegExp(`^${id} +not found; not set up$`));

      for (const id of IDS) {
        const r = await runCli(["setup", id], env);
        expect(`${id}: ${r.code} ${r.stderr}`).toBe(`${id}: 0 `);
      }
      const after = listing((await runCli(["setup"], env)).stdout);
      for (const id of IDS) {
        const parts = id === "zed" || id === "warp" ? "MCP server" : "MCP server, policy";
        expect(after.get(id)).toMatch(new RegExp(`^${id} +found \\(${home}/.*\\); installed: ${parts}$`));
      }

      const doctor = await runCli(["doctor"], env, 60_000);
      console.log(doctor.stdout.split("\n").filter((l) => Object.values(NAMES).some((n) => l.includes(`${n}:`))).join("\n"));
      for (const id of IDS) {
        expect(doctor.stdout).toContain(`ok    ${NAMES[id]}: reaches the daemon at http://127.0.0.1:${d.port}/`);
        expect(doctor.stdout).toContain(`ok    ${NAMES[id]}: the daemon accepts the token it sends`);
      }
      expect(doctor.stdout).toContain(`ok    Roo Code: mcpServers.airlock.alwaysAllow has "*"`);

      for (const id of IDS) expect((await runCli(["setup", id, "--remove"], env)).code).toBe(0);
      const removed = listing((await runCli(["setup"], env)).stdout);
      for (const id of IDS) expect(removed.get(id)).toMatch(/; not set up$/);
      expect(existsSync(join(home, ".config", "goose", "config.yaml"))).toBe(false);
      expect(existsSync(join(home, ".continue", "mcpServers", "airlock.yaml"))).toBe(false);
    } finally {
      await d.kill();
    }
  }, 120_000);

  test("--project: roo-code, continue and amp send $AIRLOCK_TOKEN (doctor resolves it; a wrong one is refused); warp's sends none", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-cfgclients-proj-"));
    const project = mkdtempSync(join(tmpdir(), "airlock-cfgclients-repo-"));
    const d = await startDaemon({ home: join(home, ".airlock") });
    try {
      const token = readFileSync(join(d.home, "token"), "utf8").trim();
      const env = { ...process.env, HOME: home, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), XDG_CONFIG_HOME: join(home, ".config"), AIRLOCK_TOKEN: token, PATH: "/usr/bin:/bin" };
      for (const id of ["roo-code", "continue", "amp", "warp"]) expect((await runCli(["setup", id, "--project", project], env)).code).toBe(0);
      for (const f of [".roo/mcp.json", ".continue/mcpServers/airlock.yaml", ".amp/settings.json", ".warp/.mcp.json"]) expect(readFileSync(join(project, f), "utf8")).not.toContain(token);
      const listed = listing((await runCli(["setup", "--project", project], env)).stdout);
      expect(listed.get("amp")).toMatch(/installed: MCP server, policy$/);

      const good = await inDir(project, ["doctor"], env);
      for (const n of ["Roo Code", "Continue", "Amp"]) expect(good.stdout).toContain(`ok    ${n} (project ${project}): the daemon accepts the token it sends`);
      expect(good.stdout).toContain(`FAIL  Warp (project ${project}): the daemon refuses its token (401): it sends none`);
      const bad = await inDir(project, ["doctor"], { ...env, AIRLOCK_TOKEN: "0".repeat(64) });
      expect(bad.stdout).toContain(`FAIL  Roo Code (project ${project}): the daemon refuses its token (401)`);

      for (const id of ["roo-code", "continue", "amp", "warp"]) expect((await runCli(["setup", id, "--project", project, "--remove"], env)).code).toBe(0);
      for (const f of [".roo/mcp.json", ".continue/mcpServers/airlock.yaml", ".amp/settings.json", ".warp/.mcp.json", "AGENTS.md"]) expect(existsSync(join(project, f))).toBe(false);
    } finally {
      await d.kill();
    }
  }, 120_000);
});
