// `airlock setup vscode` round trips in a temporary HOME (module functions): user scope (token in a
// 0600 mcp.json, an always-applied user instructions file), workspace scope (an `inputs` prompt
// instead of the token, .github/copilot-instructions.md), merge with the user's JSONC, idempotence,
// --remove back to the original bytes (or no file), --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { INSTRUCTIONS_HEADER, TOKEN_INPUT, vscode, vscodePaths, vscodeUserDir } from "../../src/clients/vscode.ts";

const TOKEN = "c".repeat(64);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-vscode-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(vscode.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

describe("airlock setup vscode", () => {
  test("the user mcp.json is the default profile's: ~/.config/Code/User on Linux, Application Support on macOS", () => {
    const ctx = ctxFor();
    expect(vscodeUserDir(ctx, "linux")).toBe(join(ctx.home, ".config", "Code", "User"));
    expect(vscodeUserDir(ctx, "darwin")).toBe(join(ctx.home, "Library", "Application Support", "Code", "User"));
    expect(vscodePaths(ctx, "linux")).toEqual({ mcp: join(ctx.home, ".config", "Code", "User", "mcp.json"), policy: join(ctx.home, ".copilot", "instructions", "airlock.instructions.md") });
  });

  test("user scope: mcp.json with the token (0600) and an always-applied instructions file; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const p = vscodePaths(ctx);
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([p.mcp, p.policy]);
    expect(read(p.mcp)).toBe(`${JSON.stringify({ servers: { airlock: { type: "http", url: "http://127.0.0.1:27183/", headers: { Authorization: `Bearer ${TOKEN}` } } } }, null, 2)}\n`);
    expect(statSync(p.mcp).mode & 0o777).toBe(0o600);
    expect(read(p.policy)).toBe(INSTRUCTIONS_HEADER + policyBlock());
    expect(INSTRUCTIONS_HEADER).toContain('applyTo: "**"');
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(p.mcp)).toBe(false);
    expect(existsSync(p.policy)).toBe(false);
  });

  test("workspace scope: an input prompt instead of the token, and .github/copilot-instructions.md", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-vscode-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    const mcp = join(project, ".vscode", "mcp.json");
    expect(read(mcp)).toBe(
      `${JSON.stringify({ servers: { airlock: { type: "http", url: "http://127.0.0.1:27183/", headers: { Authorization: "Bearer ${input:airlock-token}" } } }, inputs: [TOKEN_INPUT] }, null, 2)}\n`,
    );
    expect(read(mcp)).not.toContain(TOKEN);
    expect(statSync(mcp).mode & 0o777).toBe(0o644);
    expect(read(join(project, ".github", "copilot-instructions.md"))).toBe(policyBlock());
    expect(existsSync(join(ctx.home, ".config"))).toBe(false);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(mcp)).toBe(false);
    expect(existsSync(join(project, ".github", "copilot-instructions.md"))).toBe(false);
  });

  test("merges into the workspace's JSONC (comments, other servers and inputs kept) and --remove restores the bytes", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-vscode-proj-"));
    const ctx = ctxFor(project);
    mkdirSync(join(project, ".vscode"));
    mkdirSync(join(project, ".github"));
    const mcp = `{\n  // team servers\n  "servers": {\n    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" } // work\n  },\n  "inputs": [\n    { "type": "promptString", "id": "gh", "description": "GitHub token", "password": true }\n  ]\n}\n`;
    const instructions = "# Project rules\n\n- Use bun.\n";
    writeFileSync(join(project, ".vscode", "mcp.json"), mcp);
    writeFileSync(join(project, ".github", "copilot-instructions.md"), instructions);
    await run(ctx);
    const m = read(join(project, ".vscode", "mcp.json"));
    expect(m).toContain("// team servers");
    expect(m).toContain(`"github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" }`);
    expect(m).toContain("// work");
    expect(m).toContain(`{ "type": "promptString", "id": "gh", "description": "GitHub token", "password": true },\n    {\n      "type": "promptString",\n      "id": "airlock-token"`);
    expect(m).toContain(`"airlock": {`);
    expect(read(join(project, ".github", "copilot-instructions.md"))).toBe(`${instructions}\n${policyBlock()}`);
    expect(read(join(project, ".vscode", "mcp.json.airlock-backup"))).toBe(mcp);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(project, ".vscode", "mcp.json"))).toBe(mcp);
    expect(read(join(project, ".github", "copilot-instructions.md"))).toBe(instructions);
  });

  test("a workspace mcp.json with servers but no inputs gets back exactly its bytes", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-vscode-proj-"));
    const ctx = ctxFor(project);
    mkdirSync(join(project, ".vscode"));
    const mcp = `{\n  "servers": {\n    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }\n  }\n}\n`;
    writeFileSync(join(project, ".vscode", "mcp.json"), mcp);
    await run(ctx);
    expect(read(join(project, ".vscode", "mcp.json"))).toContain(`"inputs": [`);
    await run(ctx, { remove: true });
    expect(read(join(project, ".vscode", "mcp.json"))).toBe(mcp);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    expect(diffOf(changes)).toContain(`--- /dev/null\n+++ ${vscodePaths(ctx).mcp}`);
    expect(existsSync(join(ctx.home, ".config"))).toBe(false);
    expect(existsSync(join(ctx.home, ".copilot"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });

  test("notes say there are no Airlock hooks for VS Code", () => {
    expect(vscode.notes!(ctxFor()).join("\n")).toContain("no Airlock hooks");
  });
});
