// `airlock setup codex` round trips in a temporary HOME (module functions): user scope
// (~/.codex/config.toml with bearer_token_env_var, ~/.codex/hooks.json, ~/.codex/AGENTS.md),
// project scope (.codex/ + AGENTS.md), merge with the user's commented TOML and JSON (kept byte for
// byte apart from ours), idempotence, --remove back to the original bytes, --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "@decimalturn/toml-patch";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { codex, CODEX_EDIT_MATCHER, tomlServerPart } from "../../src/clients/codex.ts";
import { listCodexHooks } from "../../src/clients/codex-trust.ts";
import { codex as codexHook } from "../../src/clients/hooks/codex.ts";
import { runCli } from "../helpers/daemon.ts";

const TOKEN = "c".repeat(64);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-codex-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(codex.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

const EXPECTED_CONFIG = `[mcp_servers]\nairlock = { url = "http://127.0.0.1:27183/", bearer_token_env_var = "AIRLOCK_TOKEN", default_tools_approval_mode = "approve" }\n`;

const group = (event: string, matcher?: string) => ({ ...(matcher ? { matcher } : {}), hooks: [{ type: "command", command: `airlock hook codex ${event}` }] });
const EXPECTED_HOOKS = `${JSON.stringify({ hooks: { SessionStart: [group("session-start")], PreToolUse: [group("pre-edit", CODEX_EDIT_MATCHER)], PostToolUse: [group("post-tool")], UserPromptSubmit: [group("prompt")], Stop: [group("stop")] } }, null, 2)}\n`;

const USER_TOML = `# My Codex config
model = "gpt-5-codex" # the default model
approval_policy = "on-request"

[mcp_servers.github] # work account
url = "https://api.githubcopilot.com/mcp/"
bearer_token_env_var = "GITHUB_PAT"

# Profiles
[profiles.fast]
model = "o4-mini"
`;

const USER_HOOKS = `{
  // my hooks
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./guard.sh" }] }
    ],
    "Stop": [{ "hooks": [{ "type": "command", "command": "./notify.sh", "timeout": 5 }] }]
  }
}
`;

const USER_AGENTS = "# Working agreements\n\n- Run `npm test` after changes.\n";

describe("airlock setup codex", () => {
  test("user scope: config.toml, hooks.json and AGENTS.md under ~/.codex, exactly; no token written", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx);
    const dir = join(ctx.home, ".codex");
    expect(changes.map((c) => c.path)).toEqual([join(dir, "config.toml"), join(dir, "hooks.json"), join(dir, "AGENTS.md")]);
    expect(read(join(dir, "config.toml"))).toBe(EXPECTED_CONFIG);
    expect(parseToml(read(join(dir, "config.toml")))).toEqual({ mcp_servers: { airlock: { url: "http://127.0.0.1:27183/", bearer_token_env_var: "AIRLOCK_TOKEN", default_tools_approval_mode: "approve" } } });
    expect(read(join(dir, "hooks.json"))).toBe(EXPECTED_HOOKS);
    expect(read(join(dir, "AGENTS.md"))).toBe(policyBlock());
    for (const f of ["config.toml", "hooks.json"]) expect(read(join(dir, f))).not.toContain(TOKEN);
    expect(codex.notes!(ctx).join("\n")).toContain(`export AIRLOCK_TOKEN="$(cat ~/.airlock/token)"`);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    for (const f of ["config.toml", "hooks.json", "AGENTS.md"]) expect(existsSync(join(dir, f))).toBe(false);
    expect(existsSync(join(ctx.airlockHome, "setup-state.json"))).toBe(false);
  });

  test("with CODEX_HOME, the user scope goes there, and nothing into ~/.codex", async () => {
    const home = mkdtempSync(join(tmpdir(), "airlock-codex-"));
    const codexHome = join(home, "elsewhere", "codex");
    // No codex on PATH: this test is about where the files go (hook trust has its e2e test).
    const path = (process.env.PATH ?? "").split(":").filter((d) => d && !existsSync(join(d, "codex"))).join(":");
    const r = await runCli(["setup", "codex"], { HOME: home, AIRLOCK_HOME: join(home, ".airlock"), AIRLOCK_PORT: "27183", CODEX_HOME: codexHome, PATH: path });
    expect(r.code).toBe(0);
    expect(read(join(codexHome, "config.toml"))).toBe(EXPECTED_CONFIG);
    expect(existsSync(join(codexHome, "hooks.json"))).toBe(true);
    expect(read(join(codexHome, "AGENTS.md"))).toBe(policyBlock());
    expect(existsSync(join(home, ".codex"))).toBe(false);
  });

  test("project scope: DIR/.codex/config.toml, DIR/.codex/hooks.json and DIR/AGENTS.md; nothing in HOME", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-codex-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    expect(read(join(project, ".codex", "config.toml"))).toBe(EXPECTED_CONFIG);
    expect(read(join(project, ".codex", "hooks.json"))).toBe(EXPECTED_HOOKS);
    expect(read(join(project, "AGENTS.md"))).toBe(policyBlock());
    expect(existsSync(join(ctx.home, ".codex"))).toBe(false);
    expect(codex.notes!(ctx).join("\n")).toContain("trust the project");
    await run(ctx, { remove: true });
    for (const f of [".codex/config.toml", ".codex/hooks.json", "AGENTS.md"]) expect(existsSync(join(project, f))).toBe(false);
  });

  test("merges into the user's commented config.toml, hooks.json and AGENTS.md, and --remove restores the bytes", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".codex");
    mkdirSync(dir);
    writeFileSync(join(dir, "config.toml"), USER_TOML);
    writeFileSync(join(dir, "hooks.json"), USER_HOOKS);
    writeFileSync(join(dir, "AGENTS.md"), USER_AGENTS);
    await run(ctx);

    const toml = read(join(dir, "config.toml"));
    // Only our line is added; every comment and the user's server and profile stay as they were.
    expect(toml).toBe(USER_TOML.replace(`approval_policy = "on-request"\n`, `approval_policy = "on-request"\nmcp_servers.airlock = { url = "http://127.0.0.1:27183/", bearer_token_env_var = "AIRLOCK_TOKEN", default_tools_approval_mode = "approve" }\n`));
    const doc = parseToml(toml) as { mcp_servers: Record<string, unknown> };
    expect(doc.mcp_servers.github).toEqual({ url: "https://api.githubcopilot.com/mcp/", bearer_token_env_var: "GITHUB_PAT" });
    expect(doc.mcp_servers.airlock).toEqual({ url: "http://127.0.0.1:27183/", bearer_token_env_var: "AIRLOCK_TOKEN", default_tools_approval_mode: "approve" });

    const hooks = read(join(dir, "hooks.json"));
    expect(hooks).toContain("// my hooks");
    expect(hooks).toContain(`{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./guard.sh" }] },\n      {`);
    expect(hooks).toContain(`"Stop": [{ "hooks": [{ "type": "command", "command": "./notify.sh", "timeout": 5 }] }, { "hooks": [ { "type": "command", "command": "airlock hook codex stop" } ] }]`);
    expect(read(join(dir, "AGENTS.md"))).toBe(`${USER_AGENTS}\n${policyBlock()}`);
    expect(read(join(dir, "config.toml.airlock-backup"))).toBe(USER_TOML);

    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(dir, "config.toml"))).toBe(USER_TOML);
    expect(read(join(dir, "hooks.json"))).toBe(USER_HOOKS);
    expect(read(join(dir, "AGENTS.md"))).toBe(USER_AGENTS);
  });

  test("toml-patch keeps comments, blank lines and inline comments on a round trip without MCP servers", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".codex");
    mkdirSync(dir);
    const original = `# top comment\n\nmodel = "o3" # inline\n\n[tui]\n# theme below\ntheme = "dark"\n`;
    writeFileSync(join(dir, "config.toml"), original);
    await run(ctx);
    expect(read(join(dir, "config.toml"))).toBe(`${original}\n${EXPECTED_CONFIG}`);
    await run(ctx, { remove: true });
    expect(read(join(dir, "config.toml"))).toBe(original);
  });

  test("an older entry of ours (another port) is updated in place, not duplicated", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "airlock-codex-toml-")), "config.toml");
    const part = tomlServerPart({ path, entry: { url: "http://127.0.0.1:27183/", bearer_token_env_var: "AIRLOCK_TOKEN" } });
    const old = `# keep\n[mcp_servers.airlock]\nurl = "http://127.0.0.1:4000/" # old port\nbearer_token_env_var = "AIRLOCK_TOKEN"\n`;
    const after = part.install(old, {});
    expect(after).toBe(`# keep\n[mcp_servers.airlock]\nurl = "http://127.0.0.1:27183/" # old port\nbearer_token_env_var = "AIRLOCK_TOKEN"\n`);
    expect(part.install(after, {})).toBe(after);
  });

  test("refuses a config.toml that does not parse, and leaves it alone", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".codex");
    mkdirSync(dir);
    writeFileSync(join(dir, "config.toml"), "model = \n");
    await expect(run(ctx)).rejects.toThrow("is not valid TOML");
    expect(read(join(dir, "config.toml"))).toBe("model = \n");
  });

  test("the PreToolUse matcher selects the tool the codex hook adapter reads edits from", () => {
    expect(new RegExp(CODEX_EDIT_MATCHER).test("apply_patch")).toBe(true);
    expect(new RegExp(CODEX_EDIT_MATCHER).test("Bash")).toBe(false);
    expect(codexHook.editTargets({ tool_name: "apply_patch", tool_input: { command: "*** Begin Patch\n*** Add File: a.ts\n+x\n*** End Patch" } })).toEqual(["a.ts"]);
    expect(codexHook.events).toEqual(["session-start", "pre-edit", "post-tool", "prompt", "stop"]);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    const diff = diffOf(changes);
    expect(diff).toContain(`--- /dev/null\n+++ ${join(ctx.home, ".codex", "config.toml")}`);
    expect(diff).toContain(`+airlock = { url = "http://127.0.0.1:27183/", bearer_token_env_var = "AIRLOCK_TOKEN", default_tools_approval_mode = "approve" }`);
    expect(diff).toContain(`+++ ${join(ctx.home, ".codex", "hooks.json")}`);
    expect(existsSync(join(ctx.home, ".codex"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});

describe("the codex app-server session", () => {
  test("ends with the process gone, even one that ignores SIGTERM (SIGKILL after the grace)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "airlock-appserver-"));
    const pidFile = join(dir, "pid");
    // Stands in for a Codex that answers, then ignores both EOF on stdin and SIGTERM.
    const fake = join(dir, "codex");
    writeFileSync(
      fake,
      `#!/bin/sh\necho $$ > '${pidFile}'\ntrap '' TERM\nn=0\nwhile IFS= read -r line; do\n  case "$line" in *'"id"'*) n=$((n+1)); echo "{\\"id\\":$n,\\"result\\":{\\"data\\":[]}}";; esac\ndone\nexec sleep 60\n`,
      { mode: 0o755 },
    );
    const t0 = Date.now();
    expect(await listCodexHooks({ codex: fake, cwd: dir, hooksFile: join(dir, "hooks.json") })).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
