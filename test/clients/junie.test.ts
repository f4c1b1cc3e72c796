// `airlock setup junie` round trips in a temporary HOME (module functions): the user scope (a stdio
// entry running `airlock mcp`, no token), --project (.junie/mcp/mcp.json with the bare `airlock`,
// the policy in .junie/guidelines.md), merge with a user's file shaped like JetBrains' documented
// stdio example, idempotence, --remove back to the original bytes (or no file), --dry-run.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { genericSnippet } from "../../src/clients/generic.ts";
import { junie } from "../../src/clients/junie.ts";

const TOKEN = "e".repeat(64);

function ctxFor(project?: string, o: Partial<SetupContext> = {}): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-junie-"));
  return {
    home,
    project,
    xdgConfigHome: join(home, ".config"),
    url: "http://127.0.0.1:27183/",
    tokenPath: join(home, ".airlock", "token"),
    token: TOKEN,
    airlock: "/opt/airlock/bin/airlock",
    airlockArgv: project ? ["airlock"] : ["/opt/airlock/bin/airlock"],
    airlockHome: join(home, ".airlock"),
    ...o,
  };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(junie.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

describe("airlock setup junie", () => {
  test("user scope: ~/.junie/mcp/mcp.json runs `airlock mcp` (no token in it); --remove leaves no file", async () => {
    const ctx = ctxFor();
    const mcp = join(ctx.home, ".junie", "mcp", "mcp.json");
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([mcp]);
    expect(read(mcp)).toBe(`${JSON.stringify({ mcpServers: { airlock: { command: "/opt/airlock/bin/airlock", args: ["mcp"] } } }, null, 2)}\n`);
    expect(read(mcp)).not.toContain(TOKEN);
    expect(await run(ctx)).toEqual([]);
    expect(junie.notes!(ctx).join("\n")).toContain("--project");
    await run(ctx, { remove: true });
    expect(existsSync(mcp)).toBe(false);
  });

  test("from a checkout the entry runs bun with src/main.ts, and a non-default airlock home is named in env", () => {
    const ctx = ctxFor(undefined, { airlockArgv: ["/usr/bin/bun", "/src/airlock/src/main.ts"] });
    ctx.airlockHome = "/elsewhere/.airlock";
    const p = junie.parts(ctx)[0]!;
    const doc = JSON.parse(p.install(null, { files: {} } as never));
    expect(doc.mcpServers.airlock).toEqual({ command: "/usr/bin/bun", args: ["/src/airlock/src/main.ts", "mcp"], env: { AIRLOCK_HOME: "/elsewhere/.airlock" } });
  });

  test("--project: .junie/mcp/mcp.json with the bare `airlock mcp`, and the policy in .junie/guidelines.md", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-junie-proj-"));
    const ctx = ctxFor(project);
    const changes = await run(ctx);
    expect(changes.map((c) => c.path)).toEqual([join(project, ".junie", "mcp", "mcp.json"), join(project, ".junie", "guidelines.md")]);
    expect(JSON.parse(read(join(project, ".junie", "mcp", "mcp.json")))).toEqual({ mcpServers: { airlock: { command: "airlock", args: ["mcp"] } } });
    expect(read(join(project, ".junie", "guidelines.md"))).toBe(policyBlock());
    expect(existsSync(join(ctx.home, ".junie"))).toBe(false);
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".junie", "mcp", "mcp.json"))).toBe(false);
    expect(existsSync(join(project, ".junie", "guidelines.md"))).toBe(false);
  });

  test("merges into a user's file shaped like the documented stdio example and existing guidelines; --remove restores the bytes", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-junie-merge-"));
    const ctx = ctxFor(project);
    mkdirSync(join(project, ".junie", "mcp"), { recursive: true });
    const mcp = `{\n  "mcpServers": {\n    "filesystem": {\n      "command": "npx",\n      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]\n    }\n  }\n}\n`;
    const guidelines = "# Project guidelines\n\n- Use Kotlin coroutines.\n";
    writeFileSync(join(project, ".junie", "mcp", "mcp.json"), mcp);
    writeFileSync(join(project, ".junie", "guidelines.md"), guidelines);
    await run(ctx);
    const m = read(join(project, ".junie", "mcp", "mcp.json"));
    expect(m).toContain(`"args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]\n    },\n    "airlock": {`);
    expect(JSON.parse(m).mcpServers.airlock).toEqual({ command: "airlock", args: ["mcp"] });
    expect(read(join(project, ".junie", "guidelines.md"))).toContain(policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(project, ".junie", "mcp", "mcp.json"))).toBe(mcp);
    expect(read(join(project, ".junie", "guidelines.md"))).toBe(guidelines);
  });

  test("--dry-run returns the diff and writes nothing", async () => {
    const ctx = ctxFor();
    const changes = await run(ctx, { dryRun: true });
    expect(diffOf(changes)).toContain(`--- /dev/null\n+++ ${join(ctx.home, ".junie", "mcp", "mcp.json")}`);
    expect(existsSync(join(ctx.home, ".junie"))).toBe(false);
    expect(existsSync(join(ctx.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});

test("generic prints the stdio entry next to the HTTP one", () => {
  const snippet = genericSnippet(ctxFor());
  expect(snippet).toContain(`"command": "/opt/airlock/bin/airlock"`);
  expect(snippet).toContain(`"mcp"`);
});
