// Zed: the MCP server in ~/.config/zed/settings.json (`$XDG_CONFIG_HOME/zed` on Linux) under
// `context_servers.airlock`, a remote server `{url, headers}`. Zed's settings are JSON with
// comments: the shared jsonc edit keeps them byte for byte. Zed keeps user rules in its Rules
// Library (not a file), so the user scope prints the policy; --project writes it to the
// project's AGENTS.md (one of the rules files Zed reads, the first found of .rules, .cursorrules,
// …, AGENTS.md, CLAUDE.md). No hooks (Zed's agent has none).
// Token: Zed is a GUI app and documents no variable expansion in settings.json, so the user file
// holds the literal token and is written 0600.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { getAt, jsonServerPart, parseJsonc, policyBlock, SERVER_KEY, textBlockPart, type Client, type Part, type SetupContext } from "./client.ts";
import { readOrNull } from "./files.ts";
import { policyText } from "./policy.ts";

const ID = "zed";

export function zedPaths(ctx: SetupContext): { settings?: string; policy?: string } {
  if (ctx.project) return { policy: join(ctx.project, "AGENTS.md") };
  return { settings: join(ctx.xdgConfigHome, "zed", "settings.json") };
}

export function zedServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { url: ctx.url };
  if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  return entry;
}

export const zed: Client = {
  id: ID,
  name: "Zed",
  docs: ["https://zed.dev/docs/ai/mcp", "https://zed.dev/docs/ai/rules", "https://zed.dev/docs/configuring-zed"],
  detect(ctx) {
    const dir = join(ctx.xdgConfigHome, "zed");
    if (existsSync(dir)) return dir;
    return Bun.which("zed") ?? Bun.which("zeditor") ?? undefined;
  },
  parts(ctx) {
    const p = zedPaths(ctx);
    const parts: Part[] = [];
    if (p.settings) parts.push(jsonServerPart({ path: p.settings, container: ["context_servers"], entry: zedServer(ctx), secret: ctx.token !== undefined }));
    if (p.policy) parts.push(textBlockPart({ path: p.policy, block: policyBlock() }));
    return parts;
  },
  mcpEntry(ctx) {
    const p = zedPaths(ctx).settings;
    const text = p ? readOrNull(p) : null;
    const s = text === null ? undefined : getAt(parseJsonc(text, p!), ["context_servers", SERVER_KEY]);
    return s === undefined ? undefined : { url: getAt(s, ["url"]) as string | undefined, authorization: getAt(s, ["headers", "Authorization"]) as string | undefined };
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("Zed reads context servers from your settings.json: run `airlock setup zed` (without --project) once to add the server. Zed uses the first rules file it finds (.rules, .cursorrules, …, AGENTS.md): if the project has an earlier one, move the policy there.");
    else {
      if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
      out.push(`Zed keeps user rules in its Rules Library, not in a file: add this as a default rule there (or run setup with --project DIR for the project's AGENTS.md):\n\n${policyText()}`);
    }
    out.push("Zed has no hooks Airlock uses: the policy is what asks the agent to claim paths and take slots.");
    return out;
  },
};
