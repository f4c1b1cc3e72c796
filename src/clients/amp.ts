// Amp: the MCP server in ~/.config/amp/settings.json or the project's .amp/settings.json, under
// the flat key `amp.mcpServers` (VS Code-style dotted setting names), a remote server `{url,
// headers}`; JSONC edits keep the user's bytes. The policy in ~/.config/amp/AGENTS.md or the
// project's AGENTS.md. No hooks Airlock uses.
// Token: the user file holds the literal token, written 0600 (Amp also runs in editors, which may
// not see a shell's variables). A project file may be committed, so it sends
// `Bearer ${AIRLOCK_TOKEN}` (Amp expands `${VAR}` in an entry's headers from its environment: seen
// with the real CLI, test/e2e/setup-amp-cli.test.ts).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { getAt, jsonServerPart, parseJsonc, policyBlock, SERVER_KEY, textBlockPart, type Client, type SetupContext } from "./client.ts";
import { readOrNull } from "./files.ts";

const ID = "amp";
/** One flat key: Amp's settings.json is `{"amp.mcpServers": {…}}`, not `{amp: {mcpServers}}`. */
export const AMP_SERVERS = "amp.mcpServers";

export function ampPaths(ctx: SetupContext): { settings: string; policy: string } {
  if (ctx.project) return { settings: join(ctx.project, ".amp", "settings.json"), policy: join(ctx.project, "AGENTS.md") };
  const dir = join(ctx.home, ".config", "amp");
  return { settings: join(dir, "settings.json"), policy: join(dir, "AGENTS.md") };
}

export function ampServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { url: ctx.url };
  if (ctx.project) entry.headers = { Authorization: "Bearer ${AIRLOCK_TOKEN}" };
  else if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  return entry;
}

export const amp: Client = {
  id: ID,
  name: "Amp",
  docs: ["https://ampcode.com/manual#mcp", "https://ampcode.com/manual#configuration", "https://ampcode.com/manual#AGENTS.md"],
  detect(ctx) {
    const dir = join(ctx.home, ".config", "amp");
    if (existsSync(dir)) return dir;
    return Bun.which("amp") ?? undefined;
  },
  parts(ctx) {
    const p = ampPaths(ctx);
    return [jsonServerPart({ path: p.settings, container: [AMP_SERVERS], entry: ampServer(ctx), secret: !ctx.project && ctx.token !== undefined }), textBlockPart({ path: p.policy, block: policyBlock() })];
  },
  mcpEntry(ctx) {
    const p = ampPaths(ctx).settings;
    const text = readOrNull(p);
    const s = text === null ? undefined : getAt(parseJsonc(text, p), [AMP_SERVERS, SERVER_KEY]);
    return s === undefined ? undefined : { url: getAt(s, ["url"]) as string | undefined, authorization: getAt(s, ["headers", "Authorization"]) as string | undefined };
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("The project's .amp/settings.json reads the token from AIRLOCK_TOKEN: run amp where `export AIRLOCK_TOKEN=$(cat ~/.airlock/token)` is set (Linux), or run setup without --project. Amp runs a workspace's MCP server only once approved: run `amp mcp approve airlock` in the project.");
    else if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
    out.push("Amp has no hooks Airlock uses: the policy in AGENTS.md is what asks the agent to claim paths and take slots.");
    return out;
  },
};
