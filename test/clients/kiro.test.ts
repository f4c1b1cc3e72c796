// `airlock setup kiro` round trips in a temporary HOME: ~/.kiro/settings/mcp.json (literal token,
// 0600) or DIR/.kiro/settings/mcp.json (`${AIRLOCK_TOKEN}`, Kiro's documented expansion); the
// Kiro CLI agent ~/.kiro/agents/airlock.json with the hooks (agentSpawn, userPromptSubmit,
// preToolUse) and `allowedTools: ["@airlock"]`; the steering file; a merge that keeps the user's
// servers; idempotence; --remove back to the original bytes; --dry-run writing nothing. Shapes:
// kiro.dev/docs/mcp/configuration, kiro.dev/docs/cli/hooks, the agent configuration reference.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { kiro, KIRO_AGENT_HEADER } from "../../src/clients/kiro.ts";

const TOKEN = "e".repeat(64);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-kiro-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(kiro.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

const EXPECTED_AGENT = `${JSON.stringify(
  {
    ...KIRO_AGENT_HEADER,
    hooks: {
      agentSpawn: [{ command: "airlock hook kiro session-start" }],
      userPromptSubmit: [{ command: "airlock hook kiro prompt" }],
      preToolUse: [{ command: "airlock hook kiro pre-edit" }],
    },
  },
  null,
  2,
)}\n`;

describe("airlock setup kiro", () => {
  test("user scope: mcp.json with the token (0600), the airlock agent with its hooks, steering; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const base = join(ctx.home, ".kiro");
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([join(base, "settings", "mcp.json"), join(base, "agents", "airlock.json"), join(base, "steering", "airlock.md")]);
    expect(read(join(base, "settings", "mcp.json"))).toBe(`${JSON.stringify({ mcpServers: { airlock: { url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` }, disabled: false } } }, null, 2)}\n`);
    expect(statSync(join(base, "settings", "mcp.json")).mode & 0o777).toBe(0o600);
    expect(read(join(base, "agents", "airlock.json"))).toBe(EXPECTED_AGENT);
    expect(KIRO_AGENT_HEADER.allowedTools).toEqual(["@airlock"]);
    expect(read(join(base, "steering", "airlock.md"))).toBe(policyBlock());
    expect(kiro.notes!(ctx).join("\n")).toContain("kiro-cli chat --agent airlock");
    expect(kiro.hookEvents).toEqual(["session-start", "prompt", "pre-edit"]);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    for (const f of ["settings/mcp.json", "agents/airlock.json", "steering/airlock.md"]) expect(existsSync(join(base, f))).toBe(false);
  });

  test("project scope: ${AIRLOCK_TOKEN} instead of the token, the project agent", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-kiro-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    const mcp = read(join(project, ".kiro", "settings", "mcp.json"));
    expect(mcp).toContain('"Authorization": "Bearer ${AIRLOCK_TOKEN}"');
    expect(mcp).not.toContain(TOKEN);
    expect(read(join(project, ".kiro", "agents", "airlock.json"))).toBe(EXPECTED_AGENT);
    expect(existsSync(join(ctx.home, ".kiro"))).toBe(false);
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".kiro", "settings", "mcp.json"))).toBe(false);
    expect(existsSync(join(project, ".kiro", "agents", "airlock.json"))).toBe(false);
  });

  test("merges into the user's mcp.json (their servers kept) and --remove restores the bytes", async () => {
    const ctx = ctxFor();
    mkdirSync(join(ctx.home, ".kiro", "settings"), { recursive: true });
    const mine = `{\n  "mcpServers": {\n    "fetch": { "command": "uvx", "args": ["mcp-server-fetch"], "env": {}, "disabled": false, "autoApprove": [] }\n  }\n}\n`;
    writeFileSync(join(ctx.home, ".kiro", "settings", "mcp.json"), mine);
    await run(ctx);
    const doc = JSON.parse(read(join(ctx.home, ".kiro", "settings", "mcp.json")));
    expect(Object.keys(doc.mcpServers)).toEqual(["fetch", "airlock"]);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(ctx.home, ".kiro", "settings", "mcp.json"))).toBe(mine);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    expect(diffOf(await run(ctx, { dryRun: true }))).toContain(`+++ ${join(ctx.home, ".kiro", "agents", "airlock.json")}`);
    expect(existsSync(join(ctx.home, ".kiro"))).toBe(false);
  });
});
