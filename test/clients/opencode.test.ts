// `airlock setup opencode` round trips in a temporary HOME (module functions): user scope (a
// `{file:~/.airlock/token}` header, never the token), project scope (`{env:AIRLOCK_TOKEN}`),
// V1 `mcp.<name>` vs V2 `mcp.servers.<name>` files, an existing opencode.jsonc, merge with the
// user's JSONC, the plugin file (written whole, deleted on --remove), idempotence, --remove back to
// the original bytes (or no file), --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { opencode, opencodeServer } from "../../src/clients/opencode.ts";
import { opencodePluginSource } from "../../src/clients/opencode-plugin.ts";

const TOKEN = "e".repeat(64);

function ctxFor(o: { project?: string; tokenFile?: boolean } = {}): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-opencode-"));
  if (o.tokenFile !== false) {
    mkdirSync(join(home, ".airlock"), { mode: 0o700 });
    writeFileSync(join(home, ".airlock", "token"), `${TOKEN}\n`, { mode: 0o600 });
  }
  return { home, project: o.project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(opencode.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");
const entry = (auth: string) => ({ type: "remote", url: "http://127.0.0.1:27183/", oauth: false, headers: { Authorization: auth } });

describe("airlock setup opencode", () => {
  test("user scope: opencode.json reads the token file, AGENTS.md holds the policy; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const config = join(ctx.home, ".config", "opencode", "opencode.json");
    const agents = join(ctx.home, ".config", "opencode", "AGENTS.md");
    const plugin = join(ctx.home, ".config", "opencode", "plugins", "airlock.js");
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([config, agents, plugin]);
    expect(read(plugin)).toBe(opencodePluginSource("airlock"));
    expect(read(plugin)).not.toContain(TOKEN);
    expect(read(config)).toBe(`${JSON.stringify({ mcp: { airlock: entry("Bearer {file:~/.airlock/token}") } }, null, 2)}\n`);
    expect(read(config)).not.toContain(TOKEN);
    expect(statSync(config).mode & 0o777).toBe(0o644);
    expect(read(agents)).toBe(policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(config)).toBe(false);
    expect(existsSync(agents)).toBe(false);
    expect(existsSync(plugin)).toBe(false);
  });

  test("the header falls back to AIRLOCK_TOKEN without a token file, and to none without any token", () => {
    const ctx = ctxFor({ tokenFile: false });
    expect(opencodeServer(ctx)).toEqual(entry("Bearer {env:AIRLOCK_TOKEN}"));
    expect(opencodeServer({ ...ctx, token: undefined })).toEqual({ type: "remote", url: "http://127.0.0.1:27183/", oauth: false });
    expect(opencode.notes!({ ...ctx, token: undefined }).join("\n")).toContain("No token yet");
  });

  test("project scope: {env:AIRLOCK_TOKEN} in the project's opencode.json and the policy in its AGENTS.md", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-opencode-proj-"));
    const ctx = ctxFor({ project });
    await run(ctx);
    expect(read(join(project, "opencode.json"))).toBe(`${JSON.stringify({ mcp: { airlock: entry("Bearer {env:AIRLOCK_TOKEN}") } }, null, 2)}\n`);
    expect(read(join(project, "AGENTS.md"))).toBe(policyBlock());
    expect(read(join(project, ".opencode", "plugins", "airlock.js"))).toBe(opencodePluginSource("airlock"));
    expect(existsSync(join(ctx.home, ".config"))).toBe(false);
    await run(ctx, { remove: true });
    expect(existsSync(join(project, "opencode.json"))).toBe(false);
    expect(existsSync(join(project, "AGENTS.md"))).toBe(false);
    expect(existsSync(join(project, ".opencode", "plugins", "airlock.js"))).toBe(false);
  });

  test("merges into an existing opencode.jsonc (comments, other servers kept) and --remove restores the bytes", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-opencode-proj-"));
    const ctx = ctxFor({ project });
    const config = `{\n  "$schema": "https://opencode.ai/config.json",\n  // servers for this repo\n  "mcp": {\n    "context7": {\n      "type": "remote",\n      "url": "https://mcp.context7.com/mcp",\n    },\n  },\n}\n`;
    const agents = "# Repo rules\n\nUse bun.\n";
    writeFileSync(join(project, "opencode.jsonc"), config);
    writeFileSync(join(project, "AGENTS.md"), agents);
    await run(ctx);
    expect(existsSync(join(project, "opencode.json"))).toBe(false);
    const c = read(join(project, "opencode.jsonc"));
    expect(c).toContain("// servers for this repo");
    expect(c).toContain(`"url": "https://mcp.context7.com/mcp",\n    },\n    "airlock": {\n      "type": "remote",`);
    expect(read(join(project, "AGENTS.md"))).toBe(`${agents}\n${policyBlock()}`);
    expect(read(join(project, "opencode.jsonc.airlock-backup"))).toBe(config);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(project, "opencode.jsonc"))).toBe(config);
    expect(read(join(project, "AGENTS.md"))).toBe(agents);
  });

  test("a V2 config with mcp.servers gets the entry under mcp.servers, and back", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".config", "opencode");
    mkdirSync(dir, { recursive: true });
    const config = `{\n  "mcp": {\n    "servers": {\n      "my-server": { "type": "local", "command": ["npx", "-y", "example-mcp-server"] }\n    }\n  }\n}\n`;
    writeFileSync(join(dir, "opencode.json"), config);
    await run(ctx);
    const c = JSON.parse(read(join(dir, "opencode.json")));
    expect(c.mcp.servers.airlock).toEqual(entry("Bearer {file:~/.airlock/token}"));
    expect(c.mcp.airlock).toBeUndefined();
    expect(opencode.parts(ctx).map((p) => p.isInstalled(read(p.path)))).toEqual([true, true, true]);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(dir, "opencode.json"))).toBe(config);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    expect(diffOf(changes)).toContain(`--- /dev/null\n+++ ${join(ctx.home, ".config", "opencode", "opencode.json")}`);
    expect(existsSync(join(ctx.home, ".config"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});
