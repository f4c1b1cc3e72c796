// opencode: the MCP server in ~/.config/opencode/opencode.json (user) or the project's
// opencode.json (`mcp.airlock`, `{type: "remote", url, oauth: false, headers}`), the policy in
// ~/.config/opencode/AGENTS.md or the project's AGENTS.md, and the Airlock plugin in
// ~/.config/opencode/plugins/airlock.js or the project's .opencode/plugins/airlock.js
// (opencode-plugin.ts: a V1 plugin, written only when `opencode --version` is not 2.x or later).
// Config shape: opencode V1 keeps servers directly under `mcp`; V2 reads that V1 shape from the same
// files (its native shape is `mcp.servers`). We write the V1 shape, which both read, unless the file
// already uses `mcp.servers`; an existing opencode.jsonc is edited instead of adding opencode.json.
// Token: opencode substitutes `{file:path}` and `{env:NAME}` in its config when it loads it. The
// user file reads `{file:~/.airlock/token}` (opencode trims the newline), so it never holds the
// token and survives a rotation; a project file may be committed and a teammate may have no token
// file (a missing {file:} is a config error in opencode), so it reads `{env:AIRLOCK_TOKEN}`.
// `oauth: false` stops opencode from starting an OAuth sign-in when a header is wrong.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { JSONPath } from "jsonc-parser";
import { opencodePluginPart } from "./opencode-plugin.ts";
import { getAt, jsonServerPart, parseJsonc, policyBlock, SERVER_KEY, textBlockPart, type Client, type Part, type SetupContext } from "./client.ts";

const ID = "opencode";
const V1_CONTAINER: JSONPath = ["mcp"];
const V2_CONTAINER: JSONPath = ["mcp", "servers"];

/** The config file in `dir`: opencode.jsonc if only that one exists, else opencode.json. */
function configFile(dir: string): string {
  const json = join(dir, "opencode.json");
  const jsonc = join(dir, "opencode.jsonc");
  return !existsSync(json) && existsSync(jsonc) ? jsonc : json;
}

export function opencodePaths(ctx: SetupContext): { config: string; policy: string } {
  const dir = ctx.project ?? join(ctx.xdgConfigHome, "opencode");
  return { config: configFile(dir), policy: join(dir, "AGENTS.md") };
}

/** How the header reaches the token, or undefined when there is none to reach yet. */
export function tokenReference(ctx: SetupContext): string | undefined {
  if (ctx.project) return "{env:AIRLOCK_TOKEN}";
  if (existsSync(ctx.tokenPath)) return ctx.tokenPath === join(ctx.home, ".airlock", "token") ? "{file:~/.airlock/token}" : `{file:${ctx.tokenPath}}`;
  return ctx.token !== undefined ? "{env:AIRLOCK_TOKEN}" : undefined;
}

export function opencodeServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { type: "remote", url: ctx.url, oauth: false };
  const ref = tokenReference(ctx);
  if (ref !== undefined) entry.headers = { Authorization: `Bearer ${ref}` };
  return entry;
}

/** V2's native `mcp.servers` map (an object that is not itself a V1 server named "servers"). */
function usesServersMap(text: string | null, file: string): boolean {
  if (text === null || text.trim() === "") return false;
  const servers = getAt(parseJsonc(text, file), V2_CONTAINER);
  return servers !== null && typeof servers === "object" && !Array.isArray(servers) && typeof (servers as { type?: unknown }).type !== "string";
}

/** The server entry, under `mcp` or `mcp.servers` depending on the shape the file already has. */
function opencodeServerPart(ctx: SetupContext, file: string): Part {
  const at = (container: JSONPath) => jsonServerPart({ path: file, container, entry: opencodeServer(ctx) });
  const has = (text: string, container: JSONPath) => getAt(parseJsonc(text, file), [...container, SERVER_KEY]) !== undefined;
  return {
    what: "MCP server",
    path: file,
    install: (text, rec) => at(usesServersMap(text, file) ? V2_CONTAINER : V1_CONTAINER).install(text, rec),
    remove: (text, rec) => at(has(text, V2_CONTAINER) && usesServersMap(text, file) ? V2_CONTAINER : V1_CONTAINER).remove(text, rec),
    isInstalled: (text) => text !== null && (has(text, V1_CONTAINER) || (usesServersMap(text, file) && has(text, V2_CONTAINER))),
    isEmpty: (text) => at(V1_CONTAINER).isEmpty(text),
  };
}

/** The installed OpenCode's major version (`opencode --version`), or undefined when none answers. */
let major: { bin: string | null; value: number | undefined } | undefined;
export function opencodeMajor(): number | undefined {
  const bin = Bun.which("opencode");
  if (major?.bin !== bin) major = { bin, value: readMajor(bin) };
  return major.value;
}

function readMajor(bin: string | null): number | undefined {
  if (!bin) return undefined;
  try {
    const r = Bun.spawnSync([bin, "--version"], { stdout: "pipe", stderr: "ignore", timeout: 15_000 });
    const m = /^(\d+)\./.exec(r.stdout.toString().trim());
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The V1 plugin runs in OpenCode 1.x; 2.x runs only V2 plugins (opencode-plugin.ts). */
const pluginRuns = (): boolean => (opencodeMajor() ?? 1) < 2;

export const opencode: Client = {
  id: ID,
  name: "opencode",
  docs: ["https://opencode.ai/docs/plugins/", "https://opencode.ai/docs/mcp-servers/", "https://opencode.ai/docs/config/", "https://opencode.ai/docs/rules/", "https://opencode.ai/docs/migrate-v1/"],
  detect(ctx) {
    const dir = join(ctx.xdgConfigHome, "opencode");
    if (existsSync(dir)) return dir;
    return Bun.which("opencode") ?? undefined;
  },
  parts(ctx) {
    const p = opencodePaths(ctx);
    const parts = [opencodeServerPart(ctx, p.config), textBlockPart({ path: p.policy, block: policyBlock() })];
    return pluginRuns() ? [...parts, opencodePluginPart(ctx)] : parts;
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("The project's opencode.json reads the token from AIRLOCK_TOKEN: run opencode where `export AIRLOCK_TOKEN=$(cat ~/.airlock/token)` is set (Linux), or run setup without --project.");
    else if (tokenReference(ctx) === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
    if (!pluginRuns()) out.push("This OpenCode is 2.x, which runs only V2 plugins: the Airlock plugin (a V1 plugin) is not installed, and the policy in AGENTS.md is what asks the agent to claim paths and take slots.");
    return out;
  },
};
