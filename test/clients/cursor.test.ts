// `airlock setup cursor` round trips in a temporary HOME (module functions): user scope (token in a
// 0600 mcp.json), project scope (env interpolation, hooks.json, an always-applied .mdc rule),
// merge with the user's JSONC, idempotence, --remove back to the original bytes, --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { cursor, CURSOR_EDIT_MATCHER, RULE_HEADER } from "../../src/clients/cursor.ts";
import { CURSOR_EDIT_TOOLS } from "../../src/clients/hooks/cursor.ts";

const TOKEN = "b".repeat(64);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-cursor-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(cursor.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

const EXPECTED_HOOKS = `${JSON.stringify(
  {
    version: 1,
    hooks: {
      sessionStart: [{ command: "airlock hook cursor session-start" }],
      preToolUse: [{ command: "airlock hook cursor pre-edit", matcher: CURSOR_EDIT_MATCHER }],
      postToolUse: [{ command: "airlock hook cursor post-tool" }],
      stop: [{ command: "airlock hook cursor stop" }],
    },
  },
  null,
  2,
)}\n`;

describe("airlock setup cursor", () => {
  test("the preToolUse matcher names exactly the tools the pre-edit hook checks", () => {
    expect(CURSOR_EDIT_MATCHER).toBe("Write|StrReplace|Edit|Delete");
    expect(CURSOR_EDIT_MATCHER.split("|")).toEqual([...CURSOR_EDIT_TOOLS]);
  });

  test("user scope: ~/.cursor/mcp.json with the token (0600) and ~/.cursor/hooks.json; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([join(ctx.home, ".cursor", "mcp.json"), join(ctx.home, ".cursor", "hooks.json")]);
    const mcp = join(ctx.home, ".cursor", "mcp.json");
    expect(read(mcp)).toBe(`${JSON.stringify({ mcpServers: { airlock: { url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` } } } }, null, 2)}\n`);
    expect(statSync(mcp).mode & 0o777).toBe(0o600);
    expect(read(join(ctx.home, ".cursor", "hooks.json"))).toBe(EXPECTED_HOOKS);
    expect(cursor.notes!(ctx).join("\n")).toContain("Settings → Rules");
    // A hook that fails open says so on stderr only: Cursor shows that in its Hooks output panel.
    for (const c of [ctx, ctxFor(mkdtempSync(join(tmpdir(), "airlock-cursor-proj-")))]) expect(cursor.notes!(c).join("\n")).toContain("Hooks output panel");
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(mcp)).toBe(false);
    expect(existsSync(join(ctx.home, ".cursor", "hooks.json"))).toBe(false);
  });

  test("project scope: env interpolation instead of the token, and an always-applied rule", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-cursor-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    const mcp = read(join(project, ".cursor", "mcp.json"));
    expect(mcp).toContain('"Authorization": "Bearer ${env:AIRLOCK_TOKEN}"');
    expect(mcp).not.toContain(TOKEN);
    expect(read(join(project, ".cursor", "hooks.json"))).toBe(EXPECTED_HOOKS);
    expect(read(join(project, ".cursor", "rules", "airlock.mdc"))).toBe(RULE_HEADER + policyBlock());
    expect(existsSync(join(ctx.home, ".cursor"))).toBe(false);
    await run(ctx, { remove: true });
    for (const f of ["mcp.json", "hooks.json", "rules/airlock.mdc"]) expect(existsSync(join(project, ".cursor", f))).toBe(false);
  });

  test("merges into the user's JSONC (comments, other servers and hooks kept) and --remove restores the bytes", async () => {
    const ctx = ctxFor();
    mkdirSync(join(ctx.home, ".cursor"));
    const mcp = `{\n  // my servers\n  "mcpServers": {\n    "github": { "url": "https://api.githubcopilot.com/mcp/" } // work\n  }\n}\n`;
    const hooks = `{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{ "command": "./format.sh" }],\n    "stop": [{ "command": "./audit.sh" }]\n  }\n}\n`;
    writeFileSync(join(ctx.home, ".cursor", "mcp.json"), mcp);
    writeFileSync(join(ctx.home, ".cursor", "hooks.json"), hooks);
    await run(ctx);
    const m = read(join(ctx.home, ".cursor", "mcp.json"));
    expect(m).toContain("// my servers");
    expect(m).toContain(`"github": { "url": "https://api.githubcopilot.com/mcp/" }`);
    expect(m).toContain(`"airlock": {`);
    const h = read(join(ctx.home, ".cursor", "hooks.json"));
    expect(h).toContain(`"stop": [{ "command": "./audit.sh" }, { "command": "airlock hook cursor stop" }]`);
    expect(h).toContain(`"afterFileEdit": [{ "command": "./format.sh" }]`);
    expect(read(join(ctx.home, ".cursor", "mcp.json.airlock-backup"))).toBe(mcp);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(ctx.home, ".cursor", "mcp.json"))).toBe(mcp);
    expect(read(join(ctx.home, ".cursor", "hooks.json"))).toBe(hooks);
  });

  test("a hooks.json written with the older matcher (…|MultiEdit|…) gets ours replaced, not duplicated", async () => {
    const ctx = ctxFor();
    mkdirSync(join(ctx.home, ".cursor"));
    const old = EXPECTED_HOOKS.replace(CURSOR_EDIT_MATCHER, "Write|StrReplace|Edit|MultiEdit|Delete");
    expect(old).not.toBe(EXPECTED_HOOKS);
    writeFileSync(join(ctx.home, ".cursor", "hooks.json"), old);
    await run(ctx);
    expect(read(join(ctx.home, ".cursor", "hooks.json"))).toBe(EXPECTED_HOOKS);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    expect(diffOf(changes)).toContain(`--- /dev/null\n+++ ${join(ctx.home, ".cursor", "mcp.json")}`);
    expect(existsSync(join(ctx.home, ".cursor"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});
