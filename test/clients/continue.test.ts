// `airlock setup continue` round trips in a temporary HOME: a block file of our own,
// ~/.continue/mcpServers/airlock.yaml (literal token, 0600) or the project's (${{ secrets.… }}),
// and the rule ~/.continue/rules/airlock.md; --remove deletes both; a file of that name that is
// not ours is refused; --dry-run writes nothing.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { CONTINUE_HEADER, continueClient, RULE_HEADER } from "../../src/clients/continue.ts";

const TOKEN = "d4".repeat(32);

function ctxFor(project?: string): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-continue-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}
const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(continueClient.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");

describe("airlock setup continue", () => {
  test("user scope: the block file (Continue's block shape, streamable-http, literal token, 0600) and the rule; --remove deletes both", async () => {
    const ctx = ctxFor();
    const block = join(ctx.home, ".continue", "mcpServers", "airlock.yaml");
    const rule = join(ctx.home, ".continue", "rules", "airlock.md");
    expect((await run(ctx)).map((c) => c.path)).toEqual([block, rule]);
    expect(read(block)).toBe(
      `${CONTINUE_HEADER}name: Airlock\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: airlock\n    type: streamable-http\n    url: http://127.0.0.1:27183/\n    requestOptions:\n      headers:\n        Authorization: Bearer ${TOKEN}\n`,
    );
    expect(statSync(block).mode & 0o777).toBe(0o600);
    expect(read(rule)).toBe(RULE_HEADER + policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(block)).toBe(false);
    expect(existsSync(rule)).toBe(false);
    expect(existsSync(join(ctx.home, ".continue", "mcpServers"))).toBe(true);
  });

  test("--project: the block reads ${{ secrets.AIRLOCK_TOKEN }}, never the token (0644)", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-continue-proj-"));
    const ctx = ctxFor(project);
    await run(ctx);
    const block = join(project, ".continue", "mcpServers", "airlock.yaml");
    const doc = parse(read(block));
    expect(doc.mcpServers[0].requestOptions.headers.Authorization).toBe("Bearer ${{ secrets.AIRLOCK_TOKEN }}");
    expect(read(block)).not.toContain(TOKEN);
    expect(statSync(block).mode & 0o777).toBe(0o644);
    expect(continueClient.notes!(ctx).join("\n")).toContain("~/.continue/.env");
    await run(ctx, { remove: true });
    expect(existsSync(block)).toBe(false);
  });

  test("a user's own airlock.yaml is refused and left alone; the user's other blocks are never touched; --dry-run writes nothing", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".continue", "mcpServers");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "other.yaml"), "name: Other\nversion: 0.0.1\nschema: v1\nmcpServers: []\n");
    expect(diffOf(await run(ctx, { dryRun: true }))).toContain("+    type: streamable-http");
    expect(existsSync(join(dir, "airlock.yaml"))).toBe(false);
    writeFileSync(join(dir, "airlock.yaml"), "name: Mine\n");
    await expect(run(ctx)).rejects.toThrow("was not written by airlock setup");
    expect(read(join(dir, "airlock.yaml"))).toBe("name: Mine\n");
    expect(read(join(dir, "other.yaml"))).toBe("name: Other\nversion: 0.0.1\nschema: v1\nmcpServers: []\n");
  });
});
