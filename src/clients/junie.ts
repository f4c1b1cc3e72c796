// JetBrains Junie: stdio MCP servers only (its docs: "Currently, Junie supports only MCP servers
// that use the Standard Input/Output (stdio) transport type"), so the entry runs `airlock mcp`,
// the bridge (src/clients/stdio.ts), in `mcpServers.airlock` of ~/.junie/mcp/mcp.json, or with
// --project of .junie/mcp/mcp.json. With --project the policy goes into .junie/guidelines.md,
// where Junie reads project guidelines by default; Junie documents no user-scope guidelines file,
// so the user scope writes the server alone. No token anywhere: the bridge reads the token file.
// No Airlock hooks for Junie (it documents none).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { jsonServerPart, policyBlock, textBlockPart, type Client, type Part, type SetupContext } from "./client.ts";
import { stdioServer } from "./stdio.ts";

export function juniePaths(ctx: SetupContext): { mcp: string; policy?: string } {
  if (ctx.project) return { mcp: join(ctx.project, ".junie", "mcp", "mcp.json"), policy: join(ctx.project, ".junie", "guidelines.md") };
  return { mcp: join(ctx.home, ".junie", "mcp", "mcp.json") };
}

export const junie: Client = {
  id: "junie",
  name: "JetBrains Junie",
  docs: ["https://www.jetbrains.com/help/junie/model-context-protocol-mcp.html", "https://www.jetbrains.com/help/junie/customize-guidelines.html"],
  detect(ctx) {
    const dir = join(ctx.home, ".junie");
    if (existsSync(dir)) return dir;
    return Bun.which("junie") ?? undefined;
  },
  parts(ctx) {
    const p = juniePaths(ctx);
    const parts: Part[] = [jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: stdioServer(ctx) })];
    if (p.policy) parts.push(textBlockPart({ path: p.policy, block: policyBlock() }));
    return parts;
  },
  notes(ctx) {
    const out = ["Junie starts `airlock mcp` (the stdio bridge), which finds the running daemon and its token the way every airlock command does: keep the daemon running (airlock install-service)."];
    if (!ctx.project) out.push("The policy goes in a project's guidelines: run `airlock setup junie --project DIR` in each repository (it writes .junie/guidelines.md; if you set a custom Guidelines path or use AGENTS.md, add the policy there).");
    out.push("Junie has no Airlock hooks: the policy is what asks the agent to claim paths and take slots.");
    return out;
  },
};
