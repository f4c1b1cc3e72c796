// Warp: the MCP server in ~/.warp/.mcp.json or the project's .warp/.mcp.json (`mcpServers.airlock`,
// a remote server `{url, headers}`, Streamable HTTP). Warp keeps global rules in its UI, so the user
// scope prints the policy; --project writes it to the project's AGENTS.md (Warp reads AGENTS.md and
// WARP.md as project rules). No hooks Airlock uses.
// Token: Warp is a GUI app and documents no variable expansion in .mcp.json, so the user file holds
// the literal token and is written 0600. A project file may be committed, so it gets no token: the
// entry has no auth header and setup says so (on Linux the daemon refuses it; use the user entry).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { getAt, jsonServerPart, parseJsonc, policyBlock, SERVER_KEY, textBlockPart, type Client, type Part, type SetupContext } from "./client.ts";
import { readOrNull } from "./files.ts";
import { policyText } from "./policy.ts";

const ID = "warp";

export function warpPaths(ctx: SetupContext): { mcp: string; policy?: string } {
  if (ctx.project) return { mcp: join(ctx.project, ".warp", ".mcp.json"), policy: join(ctx.project, "AGENTS.md") };
  return { mcp: join(ctx.home, ".warp", ".mcp.json") };
}

export function warpServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { url: ctx.url };
  if (!ctx.project && ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  return entry;
}

export const warp: Client = {
  id: ID,
  name: "Warp",
  docs: ["https://docs.warp.dev/agent-platform/capabilities/mcp", "https://docs.warp.dev/agent-platform/capabilities/rules"],
  detect(ctx) {
    const dir = join(ctx.home, ".warp");
    if (existsSync(dir)) return dir;
    return Bun.which("warp-terminal") ?? Bun.which("warp") ?? undefined;
  },
  parts(ctx) {
    const p = warpPaths(ctx);
    const parts: Part[] = [jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: warpServer(ctx), secret: !ctx.project && ctx.token !== undefined })];
    if (p.policy) parts.push(textBlockPart({ path: p.policy, block: policyBlock() }));
    return parts;
  },
  mcpEntry(ctx) {
    const p = warpPaths(ctx).mcp;
    const text = readOrNull(p);
    const s = text === null ? undefined : getAt(parseJsonc(text, p), ["mcpServers", SERVER_KEY]);
    return s === undefined ? undefined : { url: getAt(s, ["url"]) as string | undefined, authorization: getAt(s, ["headers", "Authorization"]) as string | undefined };
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("The project's .warp/.mcp.json carries no token (Warp expands no variables there and the file may be committed): on Linux the daemon refuses it; keep using the user entry (`airlock setup warp`).");
    else {
      if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
      out.push(`Warp keeps global rules in Settings › AI › Rules, not in a file: add this there (or run setup with --project DIR for the project's AGENTS.md):\n\n${policyText()}`);
    }
    out.push("Warp has no hooks Airlock uses: the policy is what asks the agent to claim paths and take slots.");
    return out;
  },
};
