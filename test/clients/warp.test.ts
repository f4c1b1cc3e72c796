// `airlock setup warp` round trips in a temporary HOME: ~/.warp/.mcp.json (mcpServers.airlock
// {url, headers}, literal token, 0600); the project's .warp/.mcp.json with no token (Warp expands
// no variables there) and the policy in its AGENTS.md; merge, --remove, --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { warp } from "../../src/clients/warp.ts";

const TOKEN = "c3".repeat(32);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-warp-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(warp.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

describe("airlock setup warp", () => {
  test("user scope: ~/.warp/.mcp.json with the literal token (0600); the notes carry the policy; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const mcp = join(ctx.home, ".warp", ".mcp.json");
    expect((await run(ctx)).map((c) => c.path)).toEqual([mcp]);
    expect(read(mcp)).toBe(`${JSON.stringify({ mcpServers: { airlock: { url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` } } } }, null, 2)}\n`);
    expect(statSync(mcp).mode & 0o777).toBe(0o600);
    expect(warp.notes!(ctx).join("\n")).toContain("Settings › AI › Rules");
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(mcp)).toBe(false);
  });

  test("--project: .warp/.mcp.json without a token (0644) and AGENTS.md; the notes say why", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-warp-proj-"));
    const ctx = ctxFor(project);
    expect((await run(ctx)).map((c) => c.path)).toEqual([join(project, ".warp", ".mcp.json"), join(project, "AGENTS.md")]);
    const text = read(join(project, ".warp", ".mcp.json"));
    expect(JSON.parse(text).mcpServers.airlock).toEqual({ url: "http://127.0.0.1:27183/" });
    expect(statSync(join(project, ".warp", ".mcp.json")).mode & 0o777).toBe(0o644);
    expect(read(join(project, "AGENTS.md"))).toBe(policyBlock());
    expect(warp.notes!(ctx).join("\n")).toContain("carries no token");
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".warp"))).toBe(true);
    expect(existsSync(join(project, ".warp", ".mcp.json"))).toBe(false);
  });

  test("merges next to the user's servers (Warp's documented example) and --remove restores the bytes; --dry-run writes nothing", async () => {
    const ctx = ctxFor();
    mkdirSync(join(ctx.home, ".warp"), { recursive: true });
    const user = `{\n  "mcpServers": {\n    "github": {\n      "command": "npx",\n      "args": ["-y", "@modelcontextprotocol/server-github"],\n      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "<token>" }\n    },\n    "remote": { "url": "https://mcp.example.com/mcp" }\n  }\n}\n`;
    const mcp = join(ctx.home, ".warp", ".mcp.json");
    writeFileSync(mcp, user);
    expect(diffOf(await run(ctx, { dryRun: true }))).toContain('+    "airlock": {');
    expect(read(mcp)).toBe(user);
    await run(ctx);
    expect(read(mcp)).toContain(`"remote": { "url": "https://mcp.example.com/mcp" },\n    "airlock": {`);
    await run(ctx, { remove: true });
    expect(read(mcp)).toBe(user);
  });
});
