// goose: the MCP server as an extension in ~/.config/goose/config.yaml (`extensions.airlock`,
// `{enabled: true, type: streamable_http, name, description, uri, headers, timeout}`: `uri`, not
// `url`), edited with yaml-edit.ts so the user's comments and layout stay byte for byte. The policy
// in goose's hints file, ~/.config/goose/.goosehints, or the project's .goosehints. goose reads
// extensions only from the user config, so --project writes the hints alone. No hooks.
// Token: goose documents no variable expansion in an extension's headers (only `env_keys` for a
// stdio extension's environment), so the entry holds the literal token and config.yaml is 0600.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { policyBlock, SERVER_KEY, textBlockPart, type Client, type Part, type SetupContext } from "./client.ts";
import { readOrNull } from "./files.ts";
import { yamlGet, yamlServerPart } from "./yaml-edit.ts";

const ID = "goose";
/** goose's default extension timeout (seconds); a blocking Airlock call waits at most 50 s. */
const TIMEOUT_SECONDS = 300;

export function goosePaths(ctx: SetupContext): { config?: string; policy: string } {
  const dir = join(ctx.xdgConfigHome, "goose");
  if (ctx.project) return { policy: join(ctx.project, ".goosehints") };
  return { config: join(dir, "config.yaml"), policy: join(dir, ".goosehints") };
}

export function gooseExtension(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { enabled: true, type: "streamable_http", name: SERVER_KEY, description: "Airlock: coordination with other agents", uri: ctx.url };
  if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  entry.timeout = TIMEOUT_SECONDS;
  return entry;
}

export const goose: Client = {
  id: ID,
  name: "goose",
  docs: ["https://block.github.io/goose/docs/guides/config-files", "https://block.github.io/goose/docs/guides/using-goosehints"],
  detect(ctx) {
    const dir = join(ctx.xdgConfigHome, "goose");
    if (existsSync(dir)) return dir;
    return Bun.which("goose") ?? undefined;
  },
  parts(ctx) {
    const p = goosePaths(ctx);
    const parts: Part[] = [];
    if (p.config) parts.push(yamlServerPart({ path: p.config, container: "extensions", entry: gooseExtension(ctx), secret: ctx.token !== undefined }));
    parts.push(textBlockPart({ path: p.policy, block: policyBlock() }));
    return parts;
  },
  mcpEntry(ctx) {
    const p = goosePaths(ctx).config;
    if (!p) return undefined;
    const s = yamlGet(readOrNull(p), p, ["extensions", SERVER_KEY]) as { uri?: string; headers?: { Authorization?: string } } | undefined;
    return s === undefined ? undefined : { url: s.uri, authorization: s.headers?.Authorization };
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("goose reads extensions only from ~/.config/goose/config.yaml: run `airlock setup goose` (without --project) once to add the server.");
    else if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the extension has no auth header; run setup again after `airlock daemon` has started once.");
    out.push("goose has no hooks Airlock uses: the policy in .goosehints is what asks the agent to claim paths and take slots.");
    return out;
  },
};
