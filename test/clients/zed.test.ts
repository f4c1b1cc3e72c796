// `airlock setup zed` round trips in a temporary HOME: `context_servers.airlock` in Zed's
// settings.json (JSON with comments: every comment kept), the literal token (0600); --project
// writes the policy to AGENTS.md only; --remove back to the bytes; --dry-run writes nothing.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { zed } from "../../src/clients/zed.ts";

const TOKEN = "a1".repeat(32);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-zed-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(zed.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

// The shape of Zed's own default settings file: comments above and inside, a trailing comma.
const USER = `// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16,
  "buffer_font_size": 15, // a bit smaller
  "context_servers": {
    // a local one
    "local-mcp-server": {
      "command": "some-command",
      "args": ["arg-1", "arg-2"],
      "env": {}
    },
  },
  "theme": { "mode": "system", "light": "One Light", "dark": "One Dark" }
}
`;

describe("airlock setup zed", () => {
  test("user scope: context_servers.airlock {url, headers} with the literal token (0600); idempotent; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const settings = join(ctx.home, ".config", "zed", "settings.json");
    expect((await run(ctx)).map((c) => c.path)).toEqual([settings]);
    expect(read(settings)).toBe(`${JSON.stringify({ context_servers: { airlock: { url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` } } } }, null, 2)}\n`);
    expect(statSync(settings).mode & 0o777).toBe(0o600);
    expect(zed.notes!(ctx).join("\n")).toContain("Rules Library");
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(settings)).toBe(false);
  });

  test("merges into the user's settings.json keeping every comment and the trailing comma; --remove restores the bytes", async () => {
    const ctx = ctxFor();
    const settings = join(ctx.home, ".config", "zed", "settings.json");
    mkdirSync(join(ctx.home, ".config", "zed"), { recursive: true });
    writeFileSync(settings, USER);
    await run(ctx);
    const after = read(settings);
    for (const c of ["// Zed settings", "// a bit smaller", "// a local one", '"theme": { "mode": "system"']) expect(after).toContain(c);
    expect(after).toContain(`      "env": {}\n    },\n    "airlock": {\n      "url": "http://127.0.0.1:27183/",`);
    expect(statSync(settings).mode & 0o777).toBe(0o600);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(settings)).toBe(USER);
  });

  test("--project writes only the policy to the project's AGENTS.md; --dry-run writes nothing", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-zed-proj-"));
    const ctx = ctxFor(project);
    expect((await run(ctx)).map((c) => c.path)).toEqual([join(project, "AGENTS.md")]);
    expect(read(join(project, "AGENTS.md"))).toBe(policyBlock());
    await run(ctx, { remove: true });
    expect(existsSync(join(project, "AGENTS.md"))).toBe(false);
    const user = ctxFor();
    expect(diffOf(await run(user, { dryRun: true }))).toContain('+  "context_servers": {');
    expect(existsSync(join(user.home, ".config"))).toBe(false);
  });
});
