// Finding the daemon (SPEC §8) end to end: real daemons on non-default ports, and the CLI, the
// hooks, doctor and setup run with no AIRLOCK_PORT, so daemon.json is all they have to go on.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { daemonCommand, runCli, sqliteOnly, startDaemon, tempHome, useDaemonStarter } from "../helpers/daemon.ts";
import { freePort } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const start = useDaemonStarter();
const scratch = mkdtempSync(join(tmpdir(), "airlock-discovery-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const daemonFile = (home: string) => join(home, "daemon.json");
const readRecord = (home: string) => JSON.parse(readFileSync(daemonFile(home), "utf8"));
/** Only the home: no AIRLOCK_PORT, no AIRLOCK_SOCKET (the preload cleared the test's own). */
const homeEnv = (home: string) => ({ AIRLOCK_HOME: home, HOME: dirname(home) });

/** Runs a command with its working directory in `cwd` (runCli runs from the repository root). */
async function runIn(cwd: string, args: string[], env: Record<string, string>, stdin?: unknown) {
  const proc = Bun.spawn([...daemonCommand(), ...args], { cwd, env: { ...process.env, ...env }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  if (stdin !== undefined) proc.stdin.write(JSON.stringify(stdin));
  await proc.stdin.end();
  const killer = setTimeout(() => proc.kill(9), 20_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  return { stdout, stderr, code };
}

describe("daemon.json", () => {
  test("a daemon started with --port N writes its port, pid, socket and version to daemon.json (0600), and SIGTERM removes it", async () => {
    const port = freePort();
    const d = await startDaemon({ port });
    try {
      const st = statSync(daemonFile(d.home));
      expect(st.mode & 0o777).toBe(0o600);
      const rec = readRecord(d.home);
      expect(rec).toMatchObject({ format: 1, pid: d.proc.pid, host: "127.0.0.1", port, url: `http://127.0.0.1:${port}`, socket: d.socket, auth: true });
      expect(rec.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(Number.isNaN(Date.parse(rec.started_at))).toBe(false);
    } finally {
      expect(await d.kill("SIGTERM")).toBe(0);
    }
    expect(existsSync(daemonFile(d.home))).toBe(false);
  });

  // Both read the SQLite file offline (status with the daemon down), which a PostgreSQL store has not.
  sqliteOnly("kill -9 leaves a stale file that the CLI ignores; the next daemon replaces it and the CLI finds that one", async () => {
    const first = await start({ port: freePort() });
    const home = first.home;
    const stalePid = readRecord(home).pid;
    await first.kill(9);
    expect(readRecord(home).pid).toBe(stalePid); // nobody removed it

    const none = await runCli(["call", "list_locks"], homeEnv(home));
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no Airlock daemon answers");
    expect(none.stderr).not.toContain(`:${first.port}`); // a dead pid's port is not even tried
    const down = await runCli(["status"], homeEnv(home));
    expect(down.stdout).toContain(`daemon.json names pid ${stalePid}, which is gone`);

    const second = await start({ home, port: freePort() });
    expect(readRecord(home)).toMatchObject({ pid: second.proc.pid, port: second.port });
    const r = await runCli(["call", "increment_counter", '{"name":"after-restart"}'], homeEnv(home));
    expect(r).toMatchObject({ code: 0, stdout: '{"value":1}\n' });
    expect(await second.call("increment_counter", { name: "after-restart" })).toEqual({ value: 2 }); // it was this daemon
  });

  test("a second daemon sharing the home leaves the first one's daemon.json, and stopping it leaves the file too", async () => {
    const first = await start({ port: freePort() });
    const second = await start({ home: first.home, port: freePort(), socket: "off", db: join(first.home, "second.db") });
    expect(readRecord(first.home).pid).toBe(first.proc.pid);
    expect(second.output()).toContain("which is alive: leaving it");
    await second.kill("SIGTERM");
    expect(readRecord(first.home).pid).toBe(first.proc.pid);
  });
});

describe("the CLI finds a daemon on another port with no AIRLOCK_PORT", () => {
  test("status says where it runs, its pid and how it was found; call reaches it", async () => {
    const d = await start({ port: freePort() });
    const human = await runCli(["status"], homeEnv(d.home));
    expect(human.code).toBe(0);
    expect(human.stdout.split("\n")[0]).toContain(`127.0.0.1:${d.port} (pid ${d.proc.pid}, found by daemon.json)`);
    const json = JSON.parse((await runCli(["status", "--json"], homeEnv(d.home))).stdout);
    expect(json.source).toBe("daemon");
    expect(json.daemon).toEqual({ url: `http://127.0.0.1:${d.port}`, socket: d.socket, pid: d.proc.pid, found_by: "daemon.json" });

    const call = await runCli(["call", "increment_counter", '{"name":"found"}'], homeEnv(d.home));
    expect(call).toMatchObject({ code: 0, stdout: '{"value":1}\n' });
  });

  test("without daemon.json it is found on the default socket, and status says so", async () => {
    const d = await start({ port: freePort() });
    unlinkSync(daemonFile(d.home));
    const human = await runCli(["status"], homeEnv(d.home));
    expect(human.code).toBe(0);
    expect(human.stdout.split("\n")[0]).toContain(`socket ${d.socket} (pid ${d.proc.pid}, found by the default socket)`);
  });

  test("an explicit AIRLOCK_PORT is kept (no silent fall-over), and the error names the daemon daemon.json knows", async () => {
    const d = await start({ port: freePort() });
    const wrong = freePort();
    const r = await runCli(["call", "list_locks"], { ...homeEnv(d.home), AIRLOCK_PORT: String(wrong) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no Airlock daemon answers at http://127.0.0.1:${wrong}`);
    expect(r.stderr).toContain(`says a daemon (pid ${d.proc.pid}) runs at http://127.0.0.1:${d.port}`);
    expect(r.stderr).not.toContain("start one");
  });

  sqliteOnly("when the daemon is down, status reads the database and says where it looked", async () => {
    const d = await start({ port: freePort() });
    await d.kill("SIGTERM");
    const r = await runCli(["status"], homeEnv(d.home));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("daemon not running");
    expect(r.stdout).toContain("no daemon answered at");
    expect(r.stdout).toContain("no daemon.json");
  });
});

describe("AIRLOCK_SOCKET alone (a sandbox with the socket mounted)", () => {
  test("the TCP URL that token and ui name is the daemon's from daemon.json, not the default port", async () => {
    const d = await start({ port: freePort() });
    const env = { ...homeEnv(d.home), AIRLOCK_SOCKET: d.socket! };
    const token = await runCli(["token"], env);
    expect(token.code).toBe(0);
    expect(token.stdout).toContain(`MCP URL: http://localhost:${d.port}/\n`);
    // ui asks over the socket (AIRLOCK_SOCKET is the place chosen); the browser gets the TCP URL.
    const ui = await runCli(["ui", "--print"], env);
    expect(ui.code).toBe(0);
    expect(ui.stdout).toContain(`http://127.0.0.1:${d.port}/ui/login?code=`);
  });
});

describe("the hooks find it", () => {
  test("claude-code session-start reaches the daemon on another port: the summary shows another agent's lock", async () => {
    const d = await start({ port: freePort() });
    await d.call("lock_resource", { name: "discovery-probe", agent_id: "someone-else", ttl_seconds: 60 });
    const r = await runIn(scratch, ["hook", "claude-code", "session-start"], homeEnv(d.home), {
      session_id: "disc-1",
      transcript_path: "/tmp/t.jsonl",
      cwd: scratch,
      hook_event_name: "SessionStart",
      source: "startup",
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("discovery-probe — someone-else");
  });

  test("claude-code pre-edit is denied by a claim `airlock claim` made in the same repository", async () => {
    const d = await start({ port: freePort() });
    const repo = join(scratch, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    const claim = await runIn(repo, ["claim", "--agent", "codex:holder", "--reason", "discovery", "src/**"], homeEnv(d.home));
    expect(claim.code).toBe(0);
    const r = await runIn(repo, ["hook", "claude-code", "pre-edit"], homeEnv(d.home), {
      session_id: "disc-2",
      transcript_path: "/tmp/t.jsonl",
      cwd: repo,
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(repo, "src/index.ts"), content: "x" },
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toContain("codex:holder");
  });
});

describe("doctor", () => {
  test("with the daemon on another port it reports it, with its port and pid, and never says to start one", async () => {
    const d = await start({ port: freePort() });
    const r = await runCli(["doctor"], homeEnv(d.home));
    expect(r.stdout).toContain(`answers on 127.0.0.1:${d.port} (pid ${d.proc.pid}, found by daemon.json)`);
    expect(r.stdout).not.toContain("nothing listens");
    expect(r.stdout).not.toContain("airlock daemon");

    // AIRLOCK_PORT pointing elsewhere: a warning naming the daemon's port, still no "start one".
    const wrong = freePort();
    const w = await runCli(["doctor"], { ...homeEnv(d.home), AIRLOCK_PORT: String(wrong) });
    expect(w.stdout).toMatch(new RegExp(`warn +nothing answers at http://127.0.0.1:${wrong} \\(AIRLOCK_PORT\\), but a daemon does at 127.0.0.1:${d.port}`));
    expect(w.stdout).toContain(`set it to ${d.port}, or unset it`);
    expect(w.stdout).not.toContain("airlock daemon");
  });

  test("with nothing anywhere it says where it looked and advises install-service or daemon", async () => {
    const home = tempHome();
    const r = await runCli(["doctor"], homeEnv(home));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("FAIL  nothing listens on 127.0.0.1:27183");
    expect(r.stdout).toContain("no daemon.json");
    expect(r.stdout).toContain("→ airlock install-service, or airlock daemon");
  });
});

test("setup writes the running daemon's port into the MCP URL when AIRLOCK_PORT is unset", async () => {
  const d = await start({ port: freePort() });
  const r = await runCli(["setup", "claude-code"], homeEnv(d.home));
  expect(r.code).toBe(0);
  const cfg = JSON.parse(readFileSync(join(dirname(d.home), ".claude.json"), "utf8"));
  expect(cfg.mcpServers.airlock.url).toBe(`http://127.0.0.1:${d.port}/`);
});

test("setup takes the host from daemon.json too (a daemon bound to 127.0.0.2)", async () => {
  const d = await start({ port: freePort(), env: { AIRLOCK_HOST: "127.0.0.2" } });
  const r = await runCli(["setup", "claude-code"], homeEnv(d.home));
  expect(r.code).toBe(0);
  const cfg = JSON.parse(readFileSync(join(dirname(d.home), ".claude.json"), "utf8"));
  expect(cfg.mcpServers.airlock.url).toBe(`http://127.0.0.2:${d.port}/`);
});

test("setup --project writes the default port, not this user's daemon's, and says whose entry should point there", async () => {
  const d = await start({ port: freePort() });
  const project = mkdtempSync(join(tmpdir(), "airlock-proj-port-"));
  const r = await runCli(["setup", "claude-code", "--project", project], homeEnv(d.home));
  expect(JSON.parse(readFileSync(join(project, ".mcp.json"), "utf8")).mcpServers.airlock.url).toBe("http://127.0.0.1:27183/");
  expect(r.stderr).toContain(`your daemon runs at http://127.0.0.1:${d.port}/`);
  expect(r.stderr).toContain("airlock setup claude-code` (your user scope)");
  // An explicit AIRLOCK_PORT is a deliberate choice: the project gets it.
  const other = mkdtempSync(join(tmpdir(), "airlock-proj-port-"));
  await runCli(["setup", "claude-code", "--project", other], { ...homeEnv(d.home), AIRLOCK_PORT: String(d.port) });
  expect(JSON.parse(readFileSync(join(other, ".mcp.json"), "utf8")).mcpServers.airlock.url).toBe(`http://127.0.0.1:${d.port}/`);
});
