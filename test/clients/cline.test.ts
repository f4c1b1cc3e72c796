// `airlock setup cline` round trips in a temporary HOME: the CLI's cline_mcp_settings.json (and the
// VS Code extension's, when its storage exists) with the literal token, 0600; the hook scripts
// (executable, one file per hook) in ~/Documents/Cline/Hooks/ or DIR/.clinerules/hooks/; the rule
// file; a user's own hook file left alone; idempotence; --remove back to the original bytes;
// --dry-run writing nothing. Entry shape: docs.cline.bot (mcpServers, `type: "streamableHttp"`,
// `url`, `headers`, `disabled`); hooks: docs.cline.bot/customization/hooks.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { cline, hookScript } from "../../src/clients/cline.ts";

const TOKEN = "d".repeat(64);
const HOOK_FILES = ["TaskStart", "TaskResume", "PreToolUse", "PostToolUse", "UserPromptSubmit"];

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-cline-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(cline.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");
const SERVER = { type: "streamableHttp", url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` }, disabled: false };

describe("airlock setup cline", () => {
  test("user scope: the CLI's settings (0600), five executable hook scripts, the rule; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const mcp = join(ctx.home, ".cline", "data", "settings", "cline_mcp_settings.json");
    const hooks = join(ctx.home, "Documents", "Cline", "Hooks");
    await run(ctx);
    expect(read(mcp)).toBe(`${JSON.stringify({ mcpServers: { airlock: SERVER } }, null, 2)}\n`);
    expect(statSync(mcp).mode & 0o777).toBe(0o600);
    expect(read(join(hooks, "PreToolUse"))).toBe("#!/bin/sh\n# Airlock's Cline hook (airlock setup cline; taken out by airlock setup cline --remove)\nairlock hook cline pre-edit\n");
    for (const [f, e] of [["TaskStart", "session-start"], ["TaskResume", "session-start"], ["PostToolUse", "post-tool"], ["UserPromptSubmit", "prompt"]] as const) {
      expect(read(join(hooks, f))).toBe(hookScript(ctx, e));
      expect(statSync(join(hooks, f)).mode & 0o777).toBe(0o755);
    }
    expect(read(join(ctx.home, "Documents", "Cline", "Rules", "airlock.md"))).toBe(policyBlock());
    expect(cline.hookEvents).toEqual(["session-start", "pre-edit", "post-tool", "prompt"]);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(mcp)).toBe(false);
    for (const f of HOOK_FILES) expect(existsSync(join(hooks, f))).toBe(false);
  });

  test("the VS Code extension's settings get the entry too, once its storage exists", async () => {
    const ctx = ctxFor();
    const ext = join(ctx.xdgConfigHome, "Code", "User", "globalStorage", "saoudrizwan.claude-dev");
    mkdirSync(join(ext, "settings"), { recursive: true });
    const mine = `{\n  "mcpServers": {\n    "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"], "disabled": false }\n  }\n}`;
    writeFileSync(join(ext, "settings", "cline_mcp_settings.json"), mine);
    await run(ctx);
    const doc = JSON.parse(read(join(ext, "settings", "cline_mcp_settings.json")));
    expect(Object.keys(doc.mcpServers)).toEqual(["fs", "airlock"]);
    expect(doc.mcpServers.airlock).toEqual(SERVER);
    await run(ctx, { remove: true });
    expect(read(join(ext, "settings", "cline_mcp_settings.json"))).toBe(mine);
  });

  test("a hook file of the user's is left alone and named in the notes", async () => {
    const ctx = ctxFor();
    const hooks = join(ctx.home, "Documents", "Cline", "Hooks");
    mkdirSync(hooks, { recursive: true });
    const mine = "#!/usr/bin/env bash\necho '{\"cancel\": false}'\n";
    writeFileSync(join(hooks, "PreToolUse"), mine);
    await run(ctx);
    expect(read(join(hooks, "PreToolUse"))).toBe(mine);
    expect(cline.notes!(ctx).join("\n")).toContain(`${join(hooks, "PreToolUse")} is your own hook`);
    await run(ctx, { remove: true });
    expect(read(join(hooks, "PreToolUse"))).toBe(mine);
  });

  test("project scope: hooks and the rule under .clinerules, no MCP file (Cline has none per project)", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-cline-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    expect(read(join(project, ".clinerules", "hooks", "PreToolUse"))).toContain("\nairlock hook cline pre-edit\n");
    expect(read(join(project, ".clinerules", "airlock.md"))).toBe(policyBlock());
    expect(existsSync(join(ctx.home, ".cline"))).toBe(false);
    expect(cline.notes!(ctx).join("\n")).toContain("no project MCP file");
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".clinerules", "hooks", "PreToolUse"))).toBe(false);
    expect(existsSync(join(project, ".clinerules", "airlock.md"))).toBe(false);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    expect(diffOf(await run(ctx, { dryRun: true }))).toContain("+airlock hook cline pre-edit");
    expect(existsSync(join(ctx.home, "Documents"))).toBe(false);
    expect(existsSync(join(ctx.home, ".cline"))).toBe(false);
  });
});
