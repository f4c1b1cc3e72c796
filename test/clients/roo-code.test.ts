// `airlock setup roo-code` round trips in a temporary HOME: the global mcp_settings.json in the
// extension's VS Code storage (Linux and macOS paths), `type: "streamable-http"` with the literal
// token (0600); the project's .roo/mcp.json with ${env:AIRLOCK_TOKEN}; the rules file; a merge
// that keeps the user's servers and comments; --remove back to the bytes; --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { rooCode, rooPaths } from "../../src/clients/roo-code.ts";

const TOKEN = "f".repeat(64);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-roo-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(rooCode.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

describe("airlock setup roo-code", () => {
  test("the global file is in the extension's VS Code storage, per OS", () => {
    const ctx = ctxFor();
    expect(rooPaths(ctx, "linux").mcp).toBe(join(ctx.home, ".config", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"));
    expect(rooPaths(ctx, "darwin").mcp).toBe(join(ctx.home, "Library", "Application Support", "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json"));
  });

  test("user scope: streamable-http with the literal token (0600) and ~/.roo/rules/airlock.md; idempotent; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const p = rooPaths(ctx);
    expect((await run(ctx)).map((c) => c.path)).toEqual([p.mcp, p.policy]);
    expect(read(p.mcp)).toBe(`${JSON.stringify({ mcpServers: { airlock: { type: "streamable-http", url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` }, alwaysAllow: ["*"] } } }, null, 2)}\n`);
    expect(statSync(p.mcp).mode & 0o777).toBe(0o600);
    expect(p.policy).toBe(join(ctx.home, ".roo", "rules", "airlock.md"));
    expect(read(p.policy)).toBe(policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(p.mcp)).toBe(false);
    expect(existsSync(p.policy)).toBe(false);
  });

  test("--project: .roo/mcp.json sends ${env:AIRLOCK_TOKEN}, never the token; the rule in .roo/rules/", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-roo-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    const text = read(join(project, ".roo", "mcp.json"));
    expect(JSON.parse(text).mcpServers.airlock).toEqual({ type: "streamable-http", url: "http://127.0.0.1:27183/", headers: { Authorization: "Bearer ${env:AIRLOCK_TOKEN}" }, alwaysAllow: ["*"] });
    expect(text).not.toContain(TOKEN);
    expect(statSync(join(project, ".roo", "mcp.json")).mode & 0o777).toBe(0o644);
    expect(read(join(project, ".roo", "rules", "airlock.md"))).toBe(policyBlock());
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".roo", "mcp.json"))).toBe(false);
  });

  test("merges into the user's mcp_settings.json (Roo's documented example, with a comment) and --remove restores the bytes", async () => {
    const ctx = ctxFor();
    const file = rooPaths(ctx).mcp;
    mkdirSync(dirname(file), { recursive: true });
    const user = `{\n  // mine\n  "mcpServers": {\n    "remote-server": {\n      "type": "streamable-http",\n      "url": "https://your-server-url.com/mcp",\n      "headers": { "Authorization": "Bearer your-token" },\n      "alwaysAllow": ["tool3"],\n      "disabled": false\n    }\n  }\n}\n`;
    writeFileSync(file, user);
    await run(ctx);
    const after = read(file);
    expect(after.startsWith(user.slice(0, user.indexOf('"disabled": false') + 17))).toBe(true);
    expect(JSON.parse(after.replace("// mine", "")).mcpServers["remote-server"].alwaysAllow).toEqual(["tool3"]);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(file)).toBe(user);
    expect(diffOf(await run(ctx, { dryRun: true }))).toContain('+    "airlock": {');
    expect(read(file)).toBe(user);
  });
});
