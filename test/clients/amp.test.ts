// `airlock setup amp` round trips in a temporary HOME: the flat key `amp.mcpServers` in
// ~/.config/amp/settings.json ({url, headers}, literal token, 0600) or the project's
// .amp/settings.json (${AIRLOCK_TOKEN}), the policy in AGENTS.md; merge, --remove, --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { amp } from "../../src/clients/amp.ts";

const TOKEN = "b2".repeat(32);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-amp-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(amp.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

describe("airlock setup amp", () => {
  test("user scope: \"amp.mcpServers\".airlock with the literal token (0600) and ~/.config/amp/AGENTS.md; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const settings = join(ctx.home, ".config", "amp", "settings.json");
    const agents = join(ctx.home, ".config", "amp", "AGENTS.md");
    expect((await run(ctx)).map((c) => c.path)).toEqual([settings, agents]);
    expect(read(settings)).toBe(`${JSON.stringify({ "amp.mcpServers": { airlock: { url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` } } } }, null, 2)}\n`);
    expect(statSync(settings).mode & 0o777).toBe(0o600);
    expect(read(agents)).toBe(policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(settings)).toBe(false);
    expect(existsSync(agents)).toBe(false);
  });

  test("--project: .amp/settings.json sends ${AIRLOCK_TOKEN}, never the token; the project's AGENTS.md", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-amp-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    const text = read(join(project, ".amp", "settings.json"));
    expect(JSON.parse(text)["amp.mcpServers"].airlock).toEqual({ url: "http://127.0.0.1:27183/", headers: { Authorization: "Bearer ${AIRLOCK_TOKEN}" } });
    expect(text).not.toContain(TOKEN);
    expect(read(join(project, "AGENTS.md"))).toBe(policyBlock());
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".amp", "settings.json"))).toBe(false);
  });

  test("merges next to the user's settings (Amp's documented example) and --remove restores the bytes; --dry-run writes nothing", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".config", "amp");
    mkdirSync(dir, { recursive: true });
    const user = `{\n\t"amp.mcpServers": {\n\t\t"playwright": {\n\t\t\t"command": "npx",\n\t\t\t"args": ["-y", "@playwright/mcp@latest", "--headless", "--isolated"]\n\t\t}\n\t},\n\t"amp.commands.allowlist": ["npx", "node", "npm"],\n\t"amp.tools.disable": ["mermaid"]\n}\n`;
    writeFileSync(join(dir, "settings.json"), user);
    expect(diffOf(await run(ctx, { dryRun: true }))).toContain('+\t\t"airlock": {');
    expect(read(join(dir, "settings.json"))).toBe(user);
    await run(ctx);
    const after = JSON.parse(read(join(dir, "settings.json")));
    expect(Object.keys(after["amp.mcpServers"])).toEqual(["playwright", "airlock"]);
    expect(after["amp.tools.disable"]).toEqual(["mermaid"]);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(dir, "settings.json"))).toBe(user);
  });
});
