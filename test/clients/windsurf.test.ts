// `airlock setup windsurf` round trips in a temporary HOME (module functions): user scope (token in a
// 0600 mcp_config.json, the global rules file), --project (the policy in AGENTS.md only), merge with
// the user's JSONC and rules, idempotence, --remove back to the original bytes (or no file), --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { windsurf } from "../../src/clients/windsurf.ts";

const TOKEN = "d".repeat(64);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-windsurf-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(windsurf.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

describe("airlock setup windsurf", () => {
  test("user scope: mcp_config.json with serverUrl and the token (0600), and global_rules.md; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const mcp = join(ctx.home, ".codeium", "windsurf", "mcp_config.json");
    const rules = join(ctx.home, ".codeium", "windsurf", "memories", "global_rules.md");
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([mcp, rules]);
    expect(read(mcp)).toBe(`${JSON.stringify({ mcpServers: { airlock: { serverUrl: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` } } } }, null, 2)}\n`);
    expect(statSync(mcp).mode & 0o777).toBe(0o600);
    expect(read(rules)).toBe(policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(mcp)).toBe(false);
    expect(existsSync(rules)).toBe(false);
  });

  test("--project: only the policy, in the project's AGENTS.md; the notes say where the server goes", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-windsurf-proj-"));
    const ctx = ctxFor(project);
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([join(project, "AGENTS.md")]);
    expect(read(join(project, "AGENTS.md"))).toBe(policyBlock());
    expect(existsSync(join(ctx.home, ".codeium"))).toBe(false);
    expect(windsurf.notes!(ctx).join("\n")).toContain("~/.codeium/windsurf/mcp_config.json");
    await run(ctx, { remove: true });
    expect(existsSync(join(project, "AGENTS.md"))).toBe(false);
  });

  test("merges into the user's JSONC and rules (comments, other servers kept) and --remove restores the bytes", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".codeium", "windsurf");
    mkdirSync(join(dir, "memories"), { recursive: true });
    const mcp = `{\n  // my servers\n  "mcpServers": {\n    "github": {\n      "command": "npx",\n      "args": ["-y", "@modelcontextprotocol/server-github"],\n      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "\${env:GH_TOKEN}" }\n    }\n  }\n}\n`;
    const rules = "# Global rules\n- Answer briefly.";
    writeFileSync(join(dir, "mcp_config.json"), mcp);
    writeFileSync(join(dir, "memories", "global_rules.md"), rules);
    await run(ctx);
    const m = read(join(dir, "mcp_config.json"));
    expect(m).toContain("// my servers");
    expect(m).toContain(`"env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "\${env:GH_TOKEN}" }\n    },\n    "airlock": {\n      "serverUrl": "http://127.0.0.1:27183/",`);
    expect(statSync(join(dir, "mcp_config.json")).mode & 0o777).toBe(0o600);
    expect(read(join(dir, "memories", "global_rules.md"))).toBe(`${rules}\n\n${policyBlock()}`);
    expect(read(join(dir, "mcp_config.json.airlock-backup"))).toBe(mcp);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(dir, "mcp_config.json"))).toBe(mcp);
    expect(read(join(dir, "memories", "global_rules.md"))).toBe(rules);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    expect(diffOf(changes)).toContain(`--- /dev/null\n+++ ${join(ctx.home, ".codeium", "windsurf", "mcp_config.json")}`);
    expect(existsSync(join(ctx.home, ".codeium"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});
