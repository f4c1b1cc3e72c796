// `airlock setup gemini-cli` round trips in a temporary HOME (module functions): user scope
// (~/.gemini/settings.json with the token, 0600, server and hooks in one file; ~/.gemini/GEMINI.md),
// project scope (${AIRLOCK_TOKEN} instead of the token), merge with the user's JSONC settings
// (comments, other servers and hooks kept byte for byte), idempotence, --remove back to the
// original bytes, --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { GEMINI_EDIT_MATCHER, geminiCli } from "../../src/clients/gemini-cli.ts";
import { GEMINI_EDIT_TOOLS, geminiCli as geminiHook } from "../../src/clients/hooks/gemini-cli.ts";

const TOKEN = "d".repeat(64);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-gemini-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(geminiCli.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

const group = (event: string, name: string, matcher?: string) => ({
  ...(matcher ? { matcher } : {}),
  hooks: [{ name, type: "command", command: `airlock hook gemini-cli ${event}` }],
});
const HOOKS = {
  SessionStart: [group("session-start", "airlock-session-start")],
  BeforeTool: [group("pre-edit", "airlock-pre-edit", "write_file|replace")],
  AfterTool: [group("post-tool", "airlock-post-tool")],
  BeforeAgent: [group("prompt", "airlock-prompt")],
  AfterAgent: [group("stop", "airlock-stop")],
};
const expectedSettings = (authorization?: string) =>
  `${JSON.stringify({ mcpServers: { airlock: { httpUrl: "http://127.0.0.1:27183/", trust: true, ...(authorization ? { headers: { Authorization: authorization } } : {}) } }, hooks: HOOKS }, null, 2)}\n`;

const USER_SETTINGS = `{
  // my Gemini settings
  "theme": "Dracula",
  "mcpServers": {
    "github": { "httpUrl": "https://api.githubcopilot.com/mcp/", "headers": { "Authorization": "Bearer $GITHUB_PAT" } } // work
  },
  "hooks": {
    "BeforeTool": [
      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./guard.sh" }] }
    ]
  }
}
`;

describe("airlock setup gemini-cli", () => {
  test("user scope: ~/.gemini/settings.json (server with the token, 0600, and hooks) and ~/.gemini/GEMINI.md, exactly", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx);
    const settings = join(ctx.home, ".gemini", "settings.json");
    expect(changes.map((c) => c.path)).toEqual([settings, join(ctx.home, ".gemini", "GEMINI.md")]);
    expect(read(settings)).toBe(expectedSettings(`Bearer ${TOKEN}`));
    expect(statSync(settings).mode & 0o777).toBe(0o600);
    expect(read(join(ctx.home, ".gemini", "GEMINI.md"))).toBe(policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(settings)).toBe(false);
    expect(existsSync(join(ctx.home, ".gemini", "GEMINI.md"))).toBe(false);
  });

  test("project scope: ${AIRLOCK_TOKEN} instead of the token, GEMINI.md at the root; nothing in HOME", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-gemini-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    const settings = read(join(project, ".gemini", "settings.json"));
    expect(settings).toBe(expectedSettings("Bearer ${AIRLOCK_TOKEN}"));
    expect(settings).not.toContain(TOKEN);
    expect(read(join(project, "GEMINI.md"))).toBe(policyBlock());
    expect(existsSync(join(ctx.home, ".gemini"))).toBe(false);
    expect(geminiCli.notes!(ctx).join("\n")).toContain("export AIRLOCK_TOKEN=");
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".gemini", "settings.json"))).toBe(false);
    expect(existsSync(join(project, "GEMINI.md"))).toBe(false);
  });

  test("no token yet: the entry has no header, and setup says to run again", async () => {
    const ctx: SetupContext = { ...ctxFor(), token: undefined };
    await run(ctx);
    expect(read(join(ctx.home, ".gemini", "settings.json"))).toBe(expectedSettings());
    expect(geminiCli.notes!(ctx).join("\n")).toContain("No token yet");
  });

  test("merges into the user's JSONC settings (comments, other server and hook kept) and --remove restores the bytes", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".gemini");
    mkdirSync(dir);
    writeFileSync(join(dir, "settings.json"), USER_SETTINGS, { mode: 0o644 });
    writeFileSync(join(dir, "GEMINI.md"), "# Mine\n\nBe brief.");
    await run(ctx);
    const s = read(join(dir, "settings.json"));
    // The user's members keep their bytes; ours is appended after the last one (the shared
    // appendMember puts it before a comment that trails that member on its line).
    expect(s).toStartWith(`{\n  // my Gemini settings\n  "theme": "Dracula",\n  "mcpServers": {\n    "github": { "httpUrl": "https://api.githubcopilot.com/mcp/", "headers": { "Authorization": "Bearer $GITHUB_PAT" } },\n    "airlock": {`);
    expect(s).toContain(`"Bearer ${TOKEN}"\n      }\n    } // work\n  },`);
    expect(s).toContain(`{ "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./guard.sh" }] },\n      {\n        "matcher": "write_file|replace",`);
    expect(statSync(join(dir, "settings.json")).mode & 0o777).toBe(0o600); // it now holds the token
    expect(read(join(dir, "GEMINI.md"))).toBe(`# Mine\n\nBe brief.\n\n${policyBlock()}`);
    expect(read(join(dir, "settings.json.airlock-backup"))).toBe(USER_SETTINGS);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(dir, "settings.json"))).toBe(USER_SETTINGS);
    expect(read(join(dir, "GEMINI.md"))).toBe("# Mine\n\nBe brief.");
  });

  test("the BeforeTool matcher selects exactly the tools the gemini-cli hook adapter reads edits from", () => {
    expect(GEMINI_EDIT_MATCHER).toBe("write_file|replace");
    for (const tool of GEMINI_EDIT_TOOLS) expect(new RegExp(GEMINI_EDIT_MATCHER).test(tool)).toBe(true);
    expect(geminiHook.editTargets({ tool_name: "write_file", tool_input: { file_path: "src/a.ts" } })).toEqual(["src/a.ts"]);
    expect(geminiHook.events).toEqual(["session-start", "pre-edit", "post-tool", "prompt", "stop"]);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    expect(diffOf(changes)).toContain(`--- /dev/null\n+++ ${join(ctx.home, ".gemini", "settings.json")}`);
    expect(diffOf(changes)).toContain(`+      "httpUrl": "http://127.0.0.1:27183/",`);
    expect(existsSync(join(ctx.home, ".gemini"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});
