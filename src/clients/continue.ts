// Continue: the MCP server as a block file of our own, ~/.continue/mcpServers/airlock.yaml (or the
// project's .continue/mcpServers/airlock.yaml), `mcpServers: [{name, type: streamable-http, url,
// requestOptions: {headers}}]` with the block's `name`/`version`/`schema: v1`; --remove deletes it.
// The policy in a rules file of our own: ~/.continue/rules/airlock.md or DIR/.continue/rules/
// (`alwaysApply: true`). No hooks (Continue has none).
// Token: the user block holds the literal token, written 0600 (the IDE extensions do not see a
// shell's variables). A project block may be committed, so it says `${{ secrets.AIRLOCK_TOKEN }}`,
// which Continue fills from a .env file (~/.continue/.env or the workspace's .continue/.env).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { policyBlock, SERVER_KEY, textBlockPart, type Client, type SetupContext } from "./client.ts";
import { readOrNull } from "./files.ts";
import { yamlGet, yamlOwnFilePart } from "./yaml-edit.ts";

const ID = "continue";
export const CONTINUE_HEADER = "# Written by `airlock setup continue`; `airlock setup continue --remove` deletes this file.\n";
export const CONTINUE_SECRET = "${{ secrets.AIRLOCK_TOKEN }}";
export const RULE_HEADER = "---\nname: Airlock\nalwaysApply: true\n---\n";

export function continuePaths(ctx: SetupContext): { block: string; policy: string } {
  const dir = ctx.project ? join(ctx.project, ".continue") : join(ctx.home, ".continue");
  return { block: join(dir, "mcpServers", "airlock.yaml"), policy: join(dir, "rules", "airlock.md") };
}

export function continueBlock(ctx: SetupContext): Record<string, unknown> {
  const server: Record<string, unknown> = { name: SERVER_KEY, type: "streamable-http", url: ctx.url };
  const token = ctx.project ? CONTINUE_SECRET : ctx.token;
  if (token !== undefined) server.requestOptions = { headers: { Authorization: `Bearer ${token}` } };
  return { name: "Airlock", version: "0.0.1", schema: "v1", mcpServers: [server] };
}

export const continueClient: Client = {
  id: ID,
  name: "Continue",
  docs: ["https://docs.continue.dev/customize/deep-dives/mcp", "https://docs.continue.dev/reference", "https://docs.continue.dev/customize/deep-dives/rules"],
  detect(ctx) {
    const dir = join(ctx.home, ".continue");
    if (existsSync(dir)) return dir;
    return Bun.which("cn") ?? undefined;
  },
  parts(ctx) {
    const p = continuePaths(ctx);
    return [
      yamlOwnFilePart({ path: p.block, header: CONTINUE_HEADER, value: continueBlock(ctx), secret: !ctx.project && ctx.token !== undefined }),
      textBlockPart({ path: p.policy, block: policyBlock(), header: RULE_HEADER }),
    ];
  },
  mcpEntry(ctx) {
    const p = continuePaths(ctx).block;
    const list = yamlGet(readOrNull(p), p, ["mcpServers"]);
    const s = Array.isArray(list) ? (list.find((x) => (x as { name?: unknown })?.name === SERVER_KEY) as { url?: string; requestOptions?: { headers?: { Authorization?: string } } } | undefined) : undefined;
    if (s === undefined) return undefined;
    // Doctor reads the secret as the variable of the same name (Continue takes it from a .env file).
    return { url: s.url, authorization: s.requestOptions?.headers?.Authorization?.replace(CONTINUE_SECRET, "${AIRLOCK_TOKEN}") };
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("The project's block reads ${{ secrets.AIRLOCK_TOKEN }}: put `AIRLOCK_TOKEN=<contents of ~/.airlock/token>` in ~/.continue/.env (never commit it), or run setup without --project.");
    else if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
    out.push("Continue has no hooks Airlock uses: the rule in .continue/rules/airlock.md is what asks the agent to claim paths and take slots. MCP tools run only in agent mode.");
    return out;
  },
};
