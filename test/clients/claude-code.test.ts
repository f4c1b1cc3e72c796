// `airlock setup claude-code` round trips in a temporary HOME: exact files, merge with the user's
// own JSONC (comments, other servers and hooks kept byte for byte), idempotence, --remove back to
// the original bytes (or no file), --dry-run, --project. The CLI tests run the real `airlock`.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeCode, headersHelper } from "../../src/clients/claude-code.ts";
import { applyParts, isOurHookCommand, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { airlockCommand } from "../../src/clients/command.ts";
import { daemonCommand, runCli } from "../helpers/daemon.ts";

function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), "airlock-setup-"));
  mkdirSync(join(home, ".airlock"), { mode: 0o700 });
  writeFileSync(join(home, ".airlock", "token"), "a".repeat(64) + "\n", { mode: 0o600 });
  return home;
}

function ctxFor(home: string, o: Partial<SetupContext> = {}): SetupContext {
  return {
    home,
    xdgConfigHome: join(home, ".config"),
    url: "http://127.0.0.1:27183/",
    tokenPath: join(home, ".airlock", "token"),
    token: "a".repeat(64),
    airlock: "airlock",
    airlockHome: join(home, ".airlock"),
    ...o,
  };
}

const setup = (home: string, args: string[] = [], env: Record<string, string> = {}) =>
  runCli(["setup", "claude-code", ...args], { HOME: home, AIRLOCK_HOME: join(home, ".airlock"), AIRLOCK_PORT: "27183", XDG_CONFIG_HOME: join(home, ".config"), ...env });

const read = (p: string) => readFileSync(p, "utf8");

const HELPER = `printf '{"Authorization":"Bearer %s"}' "\${AIRLOCK_TOKEN:-$(cat "$HOME/.airlock/token")}"`;

const EXPECTED_CLAUDE_JSON = `${JSON.stringify({ mcpServers: { airlock: { type: "http", url: "http://127.0.0.1:27183/", headersHelper: HELPER } } }, null, 2)}\n`;

/** What the CLI under test writes into user-scope hooks (same PATH, same program as here). */
const [EXE, MAIN] = daemonCommand();
const AIRLOCK = airlockCommand({ execPath: EXE!, main: MAIN ?? EXE! });

/** A PATH with an `airlock` on it that runs the program under test (for project-scope files). */
function pathWithAirlock(): string {
  const bin = mkdtempSync(join(tmpdir(), "airlock-bin-"));
  writeFileSync(join(bin, "airlock"), `#!/bin/sh\nexec ${daemonCommand().map((a) => `'${a}'`).join(" ")} "$@"\n`, { mode: 0o755 });
  return `${bin}:${process.env.PATH ?? ""}`;
}

const hookGroupOf = (cmd: string) => (event: string, matcher?: string) => ({ ...(matcher ? { matcher } : {}), hooks: [{ type: "command", command: `${cmd} hook claude-code ${event}` }] });
const settingsFor = (cmd: string) => {
  const hookGroup = hookGroupOf(cmd);
  return `${JSON.stringify(
    {
      hooks: { SessionStart: [hookGroup("session-start", "startup|resume|clear|compact")], PreToolUse: [hookGroup("pre-edit", "Edit|Write|MultiEdit|NotebookEdit")], PostToolUse: [hookGroup("post-tool")], UserPromptSubmit: [hookGroup("prompt")], Stop: [hookGroup("stop")] },
      permissions: { allow: ["mcp__airlock"] },
    },
    null,
    2,
  )}\n`;
};
const EXPECTED_SETTINGS = settingsFor(AIRLOCK);
const EXPECTED_PROJECT_SETTINGS = settingsFor("airlock");
describe("airlock setup claude-code (real CLI, temporary HOME)", () => {
  test("writes the MCP server, the hooks and the policy into a fresh home, exactly", async () => {
    const home = tempHome();
    const r = await setup(home);
    expect(r.code).toBe(0);
    expect(read(join(home, ".claude.json"))).toBe(EXPECTED_CLAUDE_JSON);
    expect(read(join(home, ".claude", "settings.json"))).toBe(EXPECTED_SETTINGS);
    expect(read(join(home, ".claude", "CLAUDE.md"))).toBe(policyBlock());
    expect(read(join(home, ".claude.json"))).not.toContain("a".repeat(64)); // the token is read at connect time, never written
    expect(existsSync(join(home, ".claude.json.airlock-backup"))).toBe(false); // nothing of the user's to back up
  });

  test("with CLAUDE_CONFIG_DIR, everything goes where Claude Code then reads it, .claude.json included; nothing in HOME", async () => {
    const home = tempHome();
    const dir = join(home, "cfg", "claude");
    const r = await setup(home, [], { CLAUDE_CONFIG_DIR: dir });
    expect(r.code).toBe(0);
    expect(read(join(dir, ".claude.json"))).toBe(EXPECTED_CLAUDE_JSON);
    expect(read(join(dir, "settings.json"))).toBe(EXPECTED_SETTINGS);
    expect(read(join(dir, "CLAUDE.md"))).toBe(policyBlock());
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
    expect(existsSync(join(home, ".claude"))).toBe(false);
    expect((await setup(home, ["--remove"], { CLAUDE_CONFIG_DIR: dir })).code).toBe(0);
    expect(existsSync(join(dir, ".claude.json"))).toBe(false);
  });

  test("a second run changes nothing", async () => {
    const home = tempHome();
    await setup(home);
    const files = [".claude.json", ".claude/settings.json", ".claude/CLAUDE.md"].map((f) => join(home, f));
    const before = files.map(read);
    const mtimes = files.map((f) => statSync(f).mtimeMs);
    const r = await setup(home);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("nothing changed");
    expect(files.map(read)).toEqual(before);
    expect(files.map((f) => statSync(f).mtimeMs)).toEqual(mtimes);
  });

  test("--remove after setup in a fresh home leaves no file behind", async () => {
    const home = tempHome();
    await setup(home);
    const r = await setup(home, ["--remove"]);
    expect(r.code).toBe(0);
    for (const f of [".claude.json", ".claude/settings.json", ".claude/CLAUDE.md", ".airlock/setup-state.json"]) expect(existsSync(join(home, f))).toBe(false);
    for (const f of [".claude.json", ".claude/settings.json", ".claude/CLAUDE.md"]) expect(existsSync(join(home, f + ".airlock-backup"))).toBe(false);
  });

  test("merges into the user's files, keeps their comments, servers and hooks, and --remove restores the bytes", async () => {
    const home = tempHome();
    const claudeJson = `{\n  "numStartups": 3,\n  "mcpServers": {\n    "github": {\n      "type": "http",\n      "url": "https://api.githubcopilot.com/mcp/"\n    }\n  }\n}\n`;
    const settings = [
      "// my settings",
      "{",
      '    "model": "opus", // the big one',
      '    "hooks": {',
      '        "PreToolUse": [',
      '            { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./guard.sh" }] }',
      "        ]",
      "    }",
      "}",
      "",
    ].join("\n");
    const memory = "# My notes\n\nAlways run the linter.";
    mkdirSync(join(home, ".claude"));
    writeFileSync(join(home, ".claude.json"), claudeJson);
    writeFileSync(join(home, ".claude", "settings.json"), settings);
    writeFileSync(join(home, ".claude", "CLAUDE.md"), memory);

    expect((await setup(home)).code).toBe(0);
    const j = JSON.parse(read(join(home, ".claude.json")));
    expect(j.numStartups).toBe(3);
    expect(j.mcpServers.github.url).toBe("https://api.githubcopilot.com/mcp/");
    expect(j.mcpServers.airlock.url).toBe("http://127.0.0.1:27183/");
    const s = read(join(home, ".claude", "settings.json"));
    expect(s.startsWith('// my settings\n{\n    "model": "opus", // the big one\n    "hooks": {\n        "PreToolUse": [\n            { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./guard.sh" }] },')).toBe(true);
    expect(s).toContain(`"command": ${JSON.stringify(`${AIRLOCK} hook claude-code pre-edit`)}`);
    expect(s).toContain('"SessionStart"');
    expect(read(join(home, ".claude", "CLAUDE.md"))).toBe(`${memory}\n\n${policyBlock()}`);
    // One-time backups of the user's originals.
    expect(read(join(home, ".claude.json.airlock-backup"))).toBe(claudeJson);
    expect(read(join(home, ".claude", "settings.json.airlock-backup"))).toBe(settings);

    expect((await setup(home)).stdout).toContain("nothing changed");
    expect((await setup(home, ["--remove"])).code).toBe(0);
    expect(read(join(home, ".claude.json"))).toBe(claudeJson);
    expect(read(join(home, ".claude", "settings.json"))).toBe(settings);
    expect(read(join(home, ".claude", "CLAUDE.md"))).toBe(memory);
  });

  test("--dry-run prints a unified diff and changes nothing", async () => {
    const home = tempHome();
    const r = await setup(home, ["--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`--- /dev/null\n+++ ${join(home, ".claude.json")}\n@@ -0,0 +1,9 @@\n+{`);
    expect(r.stdout).toContain(`+++ ${join(home, ".claude", "settings.json")}`);
    expect(r.stdout).toContain("+<!-- airlock-policy:start -->");
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
    expect(existsSync(join(home, ".claude"))).toBe(false);
    expect(existsSync(join(home, ".airlock", "setup-state.json"))).toBe(false);

    await setup(home);
    const before = read(join(home, ".claude.json"));
    const rm = await setup(home, ["--remove", "--dry-run"]);
    expect(rm.stdout).toContain(`--- ${join(home, ".claude.json")}\n+++ /dev/null`);
    expect(read(join(home, ".claude.json"))).toBe(before);
  });

  test("--project writes the project's .mcp.json, .claude/settings.json and CLAUDE.md, and --remove restores them", async () => {
    const home = tempHome();
    const project = mkdtempSync(join(tmpdir(), "airlock-proj-"));
    const memory = "# Project rules\n";
    writeFileSync(join(project, "CLAUDE.md"), memory);
    expect((await setup(home, ["--project", project], { PATH: pathWithAirlock() })).code).toBe(0);
    expect(read(join(project, ".mcp.json"))).toBe(EXPECTED_CLAUDE_JSON);
    // A committed file names the bare `airlock`, never this user's absolute path.
    expect(read(join(project, ".claude", "settings.json"))).toBe(EXPECTED_PROJECT_SETTINGS);
    expect(read(join(project, "CLAUDE.md"))).toBe(`${memory}\n${policyBlock()}`);
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
    expect((await setup(home, ["--project", project, "--remove"])).code).toBe(0);
    expect(existsSync(join(project, ".mcp.json"))).toBe(false);
    expect(existsSync(join(project, ".claude", "settings.json"))).toBe(false);
    expect(read(join(project, "CLAUDE.md"))).toBe(memory);
  });

  test("bare `airlock setup` lists the clients and what each has installed", async () => {
    const home = tempHome();
    await setup(home);
    const r = await runCli(["setup"], { HOME: home, AIRLOCK_HOME: join(home, ".airlock") });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/claude-code\s+found \(.*\.claude\.json\); installed: MCP server, hooks, permission, policy/);
    expect(r.stdout).toMatch(/generic\s+not found; prints what to paste/);
  });

  test("an unknown client is refused with the list of known ones", async () => {
    const r = await runCli(["setup", "emacs"], { HOME: tempHome() });
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toContain('unknown client "emacs"; choose one of: claude-code, codex, cursor, gemini-cli, vscode, windsurf, opencode, copilot-cli, cline, kiro, roo-code, goose, zed, continue, amp, warp, junie, generic');
  });
});

describe("claude-code parts (module)", () => {
  test("replaces an older airlock hook (another binary path) instead of adding a second one", async () => {
    const home = tempHome();
    await applyParts(claudeCode.parts(ctxFor(home, { airlock: "/old/bin/airlock" })), { airlockHome: join(home, ".airlock") });
    await applyParts(claudeCode.parts(ctxFor(home, { airlock: "/usr/local/bin/airlock" })), { airlockHome: join(home, ".airlock") });
    const s = JSON.parse(read(join(home, ".claude", "settings.json")));
    expect(s.hooks.Stop).toEqual([{ hooks: [{ type: "command", command: "/usr/local/bin/airlock hook claude-code stop" }] }]);
    expect(s.hooks.PreToolUse).toHaveLength(1);
  });

  test("recognises its hook commands by any airlock path, or a checkout run by bun", () => {
    expect(isOurHookCommand("'/My Apps/airlock' hook claude-code stop", "claude-code")).toBe(true);
    expect(isOurHookCommand("/usr/bin/bun '/src/air lock/src/main.ts' hook claude-code stop", "claude-code")).toBe(true);
    expect(isOurHookCommand("./guard.sh", "claude-code")).toBe(false);
    expect(isOurHookCommand("airlock hook cursor stop", "claude-code")).toBe(false);
  });

  test("permission: mcp__airlock is appended to the user's permissions.allow, and --remove takes exactly it out", async () => {
    const home = tempHome();
    mkdirSync(join(home, ".claude"));
    const settings = `{\n  "permissions": {\n    "allow": ["Bash(npm test)"],\n    "deny": ["Read(.env)"]\n  }\n}\n`;
    writeFileSync(join(home, ".claude", "settings.json"), settings);
    await applyParts(claudeCode.parts(ctxFor(home)), { airlockHome: join(home, ".airlock") });
    const s = JSON.parse(read(join(home, ".claude", "settings.json")));
    expect(s.permissions).toEqual({ allow: ["Bash(npm test)", "mcp__airlock"], deny: ["Read(.env)"] });
    expect(await applyParts(claudeCode.parts(ctxFor(home)), { airlockHome: join(home, ".airlock") })).toEqual([]);
    await applyParts(claudeCode.parts(ctxFor(home)), { airlockHome: join(home, ".airlock"), remove: true });
    expect(read(join(home, ".claude", "settings.json"))).toBe(settings);
  });

  test("permission: a rule the user already had is kept by --remove only if setup did not add it", async () => {
    const home = tempHome();
    mkdirSync(join(home, ".claude"));
    const settings = `{\n  "permissions": {\n    "allow": ["mcp__airlock"]\n  }\n}\n`;
    writeFileSync(join(home, ".claude", "settings.json"), settings);
    await applyParts(claudeCode.parts(ctxFor(home)), { airlockHome: join(home, ".airlock") });
    expect(JSON.parse(read(join(home, ".claude", "settings.json"))).permissions.allow).toEqual(["mcp__airlock"]);
    await applyParts(claudeCode.parts(ctxFor(home)), { airlockHome: join(home, ".airlock"), remove: true });
    expect(read(join(home, ".claude", "settings.json"))).toBe(settings);
  });

  test("headersHelper reads a token file outside the default place by its absolute path", () => {
    const home = tempHome();
    expect(headersHelper(ctxFor(home))).toBe(HELPER);
    expect(headersHelper(ctxFor(home, { tokenPath: "/srv/air lock/token" }))).toContain(`$(cat '/srv/air lock/token')`);
  });

  test("with no token yet the entry has no header helper, and setup says so", () => {
    const home = tempHome();
    const ctx = ctxFor(home, { token: undefined });
    const server = claudeCode.parts(ctx)[0]!.install(null, {});
    expect(JSON.parse(server).mcpServers.airlock).toEqual({ type: "http", url: "http://127.0.0.1:27183/" });
    expect(claudeCode.notes!(ctx).join("\n")).toContain("No token yet");
  });

  test("a file that is not JSON is refused, not overwritten", async () => {
    const home = tempHome();
    writeFileSync(join(home, ".claude.json"), "{ not json");
    await expect(applyParts(claudeCode.parts(ctxFor(home)), { airlockHome: join(home, ".airlock") })).rejects.toThrow(/is not a JSON object/);
    expect(read(join(home, ".claude.json"))).toBe("{ not json");
  });
});
