// Windsurf (Cascade): the MCP server in ~/.codeium/windsurf/mcp_config.json (`mcpServers.airlock`,
// a remote server is `{serverUrl, headers}`), the policy in the global rules file
// ~/.codeium/windsurf/memories/global_rules.md, or, with --project, in the project's AGENTS.md
// (Windsurf applies a root AGENTS.md always, with no front matter). Windsurf reads MCP servers only
// from the user file, so --project writes the policy alone. No Airlock hooks for Windsurf.
// Token: Windsurf is a GUI app that usually does not see a shell's AIRLOCK_TOKEN (its config can
// interpolate ${env:NAME}, but only from the app's own environment), so the user file holds the
// literal token and is written 0600; it is a per-user file, never a project's.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { jsonServerPart, policyBlock, textBlockPart, type Client, type Part, type SetupContext } from "./client.ts";

const ID = "windsurf";

export function windsurfPaths(ctx: SetupContext): { mcp?: string; policy: string } {
  const base = join(ctx.home, ".codeium", "windsurf");
  if (ctx.project) return { policy: join(ctx.project, "AGENTS.md") };
  return { mcp: join(base, "mcp_config.json"), policy: join(base, "memories", "global_rules.md") };
}

export function windsurfServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { serverUrl: ctx.url };
  if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  return entry;
}

export const windsurf: Client = {
  id: ID,
  name: "Windsurf",
  docs: ["https://docs.windsurf.com/windsurf/cascade/mcp", "https://docs.windsurf.com/windsurf/cascade/memories"],
  detect(ctx) {
    const dir = join(ctx.home, ".codeium", "windsurf");
    if (existsSync(dir)) return dir;
    return Bun.which("windsurf") ?? undefined;
  },
  parts(ctx) {
    const p = windsurfPaths(ctx);
    const parts: Part[] = [];
    if (p.mcp) parts.push(jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: windsurfServer(ctx), secret: ctx.token !== undefined }));
    parts.push(textBlockPart({ path: p.policy, block: policyBlock() }));
    return parts;
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("Windsurf reads MCP servers only from ~/.codeium/windsurf/mcp_config.json: run `airlock setup windsurf` (without --project) once to add the server.");
    else if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
    if (!ctx.project) out.push("Press the refresh button in Windsurf's MCP panel (or restart Windsurf) to connect.");
    out.push("Windsurf has no Airlock hooks: the policy in the rules file is what asks the agent to claim paths and take slots.");
    return out;
  },
};
