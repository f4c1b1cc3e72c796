// Roo Code (VS Code extension): the MCP server in its global mcp_settings.json, kept in the
// extension's VS Code storage (globalStorage/rooveterinaryinc.roo-cline/settings/), or in the
// project's .roo/mcp.json (which wins for a name in both); `mcpServers.airlock` is
// `{type: "streamable-http", url, headers}` (`type` is required for a URL entry). The policy in a
// rules file of our own: ~/.roo/rules/airlock.md or DIR/.roo/rules/airlock.md. No hooks.
// Token: the extension runs in VS Code's environment, which usually lacks a shell's AIRLOCK_TOKEN,
// so the user file holds the literal token, written 0600; a project file may be committed, so it
// sends `Bearer ${env:AIRLOCK_TOKEN}` (Roo Code injects `${env:NAME}` into the whole server entry,
// headers included, from the extension host's environment).
// Permission: `alwaysAllow: ["*"]` on our entry (Roo's wildcard: every tool of this server only).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { getAt, jsonServerPart, parseJsonc, policyBlock, SERVER_KEY, textBlockPart, type Client, type SetupContext } from "./client.ts";
import { readOrNull } from "./files.ts";
import { vscodeUserDir } from "./vscode.ts";

const ID = "roo-code";
/** Roo Code's extension id: the folder VS Code gives it under globalStorage. */
export const ROO_EXTENSION_ID = "rooveterinaryinc.roo-cline";

export function rooPaths(ctx: SetupContext, platform: NodeJS.Platform = process.platform): { mcp: string; policy: string } {
  if (ctx.project) return { mcp: join(ctx.project, ".roo", "mcp.json"), policy: join(ctx.project, ".roo", "rules", "airlock.md") };
  return { mcp: join(vscodeUserDir(ctx, platform), "globalStorage", ROO_EXTENSION_ID, "settings", "mcp_settings.json"), policy: join(ctx.home, ".roo", "rules", "airlock.md") };
}

export function rooServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { type: "streamable-http", url: ctx.url };
  if (ctx.project) entry.headers = { Authorization: "Bearer ${env:AIRLOCK_TOKEN}" };
  else if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  entry.alwaysAllow = ["*"];
  return entry;
}

export const rooCode: Client = {
  id: ID,
  name: "Roo Code",
  docs: ["https://docs.roocode.com/features/mcp/using-mcp-in-roo", "https://docs.roocode.com/features/custom-instructions"],
  detect(ctx) {
    const dir = join(vscodeUserDir(ctx), "globalStorage", ROO_EXTENSION_ID);
    return existsSync(dir) ? dir : undefined;
  },
  parts(ctx) {
    const p = rooPaths(ctx);
    return [jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: rooServer(ctx), secret: !ctx.project && ctx.token !== undefined }), textBlockPart({ path: p.policy, block: policyBlock() })];
  },
  mcpEntry(ctx) {
    const p = rooPaths(ctx).mcp;
    const text = readOrNull(p);
    const s = text === null ? undefined : getAt(parseJsonc(text, p), ["mcpServers", SERVER_KEY]);
    if (s === undefined) return undefined;
    const allow = getAt(s, ["alwaysAllow"]);
    return {
      url: getAt(s, ["url"]) as string | undefined,
      authorization: getAt(s, ["headers", "Authorization"]) as string | undefined,
      permission: { present: Array.isArray(allow) && allow.includes("*"), what: `mcpServers.airlock.alwaysAllow has "*" (${p})` },
    };
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("The project's .roo/mcp.json reads the token from AIRLOCK_TOKEN: start VS Code where `export AIRLOCK_TOKEN=$(cat ~/.airlock/token)` is set (Linux), or run setup without --project.");
    else if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
    out.push("Roo Code has no hooks Airlock uses: the policy in .roo/rules/airlock.md is what asks the agent to claim paths and take slots. Airlock's tools are always allowed (alwaysAllow: [\"*\"]); Roo runs them without asking only while auto-approve and its MCP switch are on.");
    return out;
  },
};
