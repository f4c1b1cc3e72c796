// `airlock claims`, `claim`, `unclaim` and `check` (incl. `check --staged` in a scratch git
// repository) against a real daemon.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, daemonCommand, runCli, useDaemon } from "../helpers/daemon.ts";

setDefaultTimeout(20_000);

const d = useDaemon();
const env = cliEnv(d);

describe("claim, claims, unclaim", () => {
  test("claim prints only the claim_token; claims lists it; unclaim releases it", async () => {
    const c = await runCli(["claim", "--room", "cli", "--agent", "me", "--reason", "api work", "src/api/**", "docs/api.md"], env);
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/^[0-9a-f]{32}\n$/);
    const token = c.stdout.trim();

    const l = await runCli(["claims", "--room", "cli"], env);
    expect(l.code).toBe(0);
    expect(l.stdout).toContain("me  src/api/** docs/api.md");
    expect(l.stdout).toContain("api work");

    const refused = await runCli(["claim", "--room", "cli", "--agent", "other", "src/api/users.ts"], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("src/api/users.ts: held by me as src/api/** (both match src/api/users.ts) — api work");

    expect(await runCli(["unclaim", token], env)).toMatchObject({ code: 0, stdout: "released\n" });
    expect(await runCli(["unclaim", token], env)).toMatchObject({ code: 0, stdout: "already released\n" });
    expect((await runCli(["claims", "--room", "cli"], env)).stdout).toBe("(no claims)\n");
  });

  test("a .. path is refused with a one-line error and exit 1", async () => {
    const r = await runCli(["claim", "../x"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('".."');
    expect(r.stderr).not.toContain("    at ");
  });
});

describe("check", () => {
  test("exits 0 when clear and 1 naming holder, claim path and witness on a conflict", async () => {
    await d.call("claim_paths", { agent_id: "holder", paths: ["lib/*.ts"], room: "chk" });
    expect(await runCli(["check", "--room", "chk", "--agent", "me", "docs/x.md"], env)).toMatchObject({ code: 0, stdout: "clear\n" });
    const r = await runCli(["check", "--room", "chk", "--agent", "me", "lib/a.ts", "docs/x.md"], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("lib/a.ts: held by holder as lib/*.ts (both match lib/a.ts)");
    // The holder itself is clear.
    expect((await runCli(["check", "--room", "chk", "--agent", "holder", "lib/a.ts"], env)).code).toBe(0);
  });

  test("--staged checks the files staged in the current repository", async () => {
    await d.call("claim_paths", { agent_id: "holder", paths: ["app/**"], room: "staged" });
    const repo = mkdtempSync(join(tmpdir(), "airlock-staged-"));
    try {
      const git = (...args: string[]) => Bun.spawnSync(["git", ...args], { cwd: repo, stdout: "ignore", stderr: "ignore" }).exitCode;
      expect(git("init", "-q")).toBe(0);
      mkdirSync(join(repo, "app"));
      writeFileSync(join(repo, "README.md"), "x\n");
      writeFileSync(join(repo, "app", "main.ts"), "x\n");
      const check = async () => {
        const proc = Bun.spawn([...daemonCommand(), "check", "--staged", "--room", "staged", "--agent", "me"], {
          cwd: repo,
          env: { ...process.env, ...env },
          stdout: "pipe",
          stderr: "pipe",
        });
        const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
        return { stdout, stderr, code };
      };
      expect(await check()).toMatchObject({ code: 0, stdout: "clear (nothing staged)\n" });
      expect(git("add", "README.md")).toBe(0);
      expect(await check()).toMatchObject({ code: 0, stdout: "clear\n" });
      expect(git("add", "app/main.ts")).toBe(0);
      const r = await check();
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("app/main.ts: held by holder as app/** (both match app/main.ts)");
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
