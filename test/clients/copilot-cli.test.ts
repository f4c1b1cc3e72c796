// `airlock setup copilot-cli` round trips in a temporary HOME: user scope ($COPILOT_HOME or
// ~/.copilot: mcp-config.json, hooks/airlock.json, copilot-instructions.md), project scope
// (.mcp.json, .github/hooks/airlock.json, .github/copilot-instructions.md), the token never
// written (Copilot expands ${AIRLOCK_TOKEN} in headers), a merge that keeps the user's JSONC,
// idempotence, --remove back to the original bytes, --dry-run writing nothing. The shapes follow
// docs.github.com (add-mcp-servers: `mcpServers`, `type: "http"`, `headers`, `tools`;
// cli-hooks-reference: `{version: 1, hooks: {event: [{type: "command", bash}]}}`).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { copilotCli } from "../../src/clients/copilot-cli.ts";

const TOKEN = "c".repeat(64);

function ctxFor(o: { project?: string; copilotHome?: string } = {}): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-copilot-"));
  return { home, ...o, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(copilotCli.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

const cmd = (e: string) => ({ bash: `airlock hook copilot-cli ${e}`, type: "command" });
export const EXPECTED_HOOKS = `${JSON.stringify(
  {
    version: 1,
    hooks: {
      sessionStart: [cmd("session-start")],
      preToolUse: [cmd("pre-edit")],
      postToolUse: [cmd("post-tool")],
      userPromptSubmitted: [cmd("prompt")],
      agentStop: [cmd("stop")],
    },
  },
  null,
  2,
)}\n`;
const SERVER = { type: "http", url: "http://127.0.0.1:27183/", headers: { Authorization: "Bearer ${AIRLOCK_TOKEN}" }, tools: ["*"] };

describe("airlock setup copilot-cli", () => {
  test("user scope: mcp-config.json without the token, our own hooks file, the instructions; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".copilot");
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([join(dir, "mcp-config.json"), join(dir, "hooks", "airlock.json"), join(dir, "copilot-instructions.md")]);
    expect(read(join(dir, "mcp-config.json"))).toBe(`${JSON.stringify({ mcpServers: { airlock: SERVER } }, null, 2)}\n`);
    expect(read(join(dir, "mcp-config.json"))).not.toContain(TOKEN);
    expect(read(join(dir, "hooks", "airlock.json"))).toBe(EXPECTED_HOOKS);
    expect(read(join(dir, "copilot-instructions.md"))).toBe(policyBlock());
    expect(copilotCli.notes!(ctx).join("\n")).toContain('export AIRLOCK_TOKEN="$(cat ~/.airlock/token)"');
    expect(copilotCli.hookEvents).toEqual(["session-start", "pre-edit", "post-tool", "prompt", "stop"]);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    for (const f of ["mcp-config.json", "hooks/airlock.json", "copilot-instructions.md"]) expect(existsSync(join(dir, f))).toBe(false);
  });

  test("COPILOT_HOME moves the user files", async () => {
    const base = mkdtempSync(join(tmpdir(), "airlock-copilot-home-"));
    const ctx = ctxFor({ copilotHome: base });
    await run(ctx);
    expect(read(join(base, "hooks", "airlock.json"))).toBe(EXPECTED_HOOKS);
    expect(existsSync(join(base, "mcp-config.json"))).toBe(true);
    expect(existsSync(join(ctx.home, ".copilot"))).toBe(false);
  });

  test("project scope: .mcp.json, .github/hooks/airlock.json and .github/copilot-instructions.md, with the bare airlock", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-copilot-proj-"));
    const ctx = ctxFor({ project });
    await run(ctx);
    expect(JSON.parse(read(join(project, ".mcp.json"))).mcpServers.airlock).toEqual(SERVER);
    expect(read(join(project, ".github", "hooks", "airlock.json"))).toBe(EXPECTED_HOOKS);
    expect(read(join(project, ".github", "copilot-instructions.md"))).toBe(policyBlock());
    expect(copilotCli.notes!(ctx).join("\n")).toContain("GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true");
    expect(existsSync(join(ctx.home, ".copilot"))).toBe(false);
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".mcp.json"))).toBe(false);
    expect(existsSync(join(project, ".github", "hooks", "airlock.json"))).toBe(false);
  });

  test("merges into the user's JSONC and instructions, and --remove restores their bytes", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".copilot");
    mkdirSync(dir);
    const mcp = `{\n  // mine\n  "mcpServers": {\n    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/", "tools": ["*"] }\n  }\n}\n`;
    const instr = "Always answer in French.\n";
    writeFileSync(join(dir, "mcp-config.json"), mcp);
    writeFileSync(join(dir, "copilot-instructions.md"), instr);
    await run(ctx);
    const m = read(join(dir, "mcp-config.json"));
    expect(m).toContain("// mine");
    expect(m).toContain(`"github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/", "tools": ["*"] }`);
    expect(m).toContain(`"airlock": {`);
    expect(read(join(dir, "copilot-instructions.md"))).toBe(`${instr}\n${policyBlock()}`);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(dir, "mcp-config.json"))).toBe(mcp);
    expect(read(join(dir, "copilot-instructions.md"))).toBe(instr);
  });

  test("an entry of ours with another command (an older binary path) is replaced, not duplicated", async () => {
    const ctx = ctxFor();
    const file = join(ctx.home, ".copilot", "hooks", "airlock.json");
    mkdirSync(join(ctx.home, ".copilot", "hooks"), { recursive: true });
    writeFileSync(file, EXPECTED_HOOKS.replaceAll('"airlock hook', '"/opt/old/bin/airlock hook'));
    await run(ctx);
    expect(read(file)).toBe(EXPECTED_HOOKS);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    expect(diffOf(changes)).toContain(`+++ ${join(ctx.home, ".copilot", "hooks", "airlock.json")}`);
    expect(existsSync(join(ctx.home, ".copilot"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});
