// Codex (CLI, IDE extension and desktop app share one config): the MCP server in ~/.codex/config.toml
// (user) or DIR/.codex/config.toml (project; Codex reads it only in a trusted project), the hooks in
// the hooks.json next to that config layer, and the policy in ~/.codex/AGENTS.md or DIR/AGENTS.md.
// Token: Codex refuses an inline bearer token in config.toml and reads it from the environment
// variable named by `bearer_token_env_var`, so no file holds the token and the same project config
// works for every teammate; the user exports AIRLOCK_TOKEN (setup says how).
// config.toml is edited with @decimalturn/toml-patch, which changes only the values that differ and
// keeps every comment, key order and blank line of the user's file.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml, patch as patchToml } from "@decimalturn/toml-patch";
import type { JSONPath } from "jsonc-parser";
import {
  deepEmpty,
  getAt,
  hookCommand,
  isOurHookCommand,
  jsonAppend,
  jsonDelete,
  parseJsonc,
  policyBlock,
  pruneCreated,
  SERVER_KEY,
  textBlockPart,
  type Client,
  type HookEvent,
  type Part,
  type SetupContext,
} from "./client.ts";
import type { CreatedRecord } from "./files.ts";
import { AirlockError, errorMessage } from "../errors.ts";

const ID = "codex";
/** The variable Codex reads the bearer token from (`bearer_token_env_var`). */
export const TOKEN_ENV = "AIRLOCK_TOKEN";
/**
 * apply_patch is Codex's file-edit tool; since openai/codex#18391 it emits PreToolUse with that
 * tool name, and Codex's own end-to-end test matches it with this anchored regex.
 */
export const CODEX_EDIT_MATCHER = "^apply_patch$";

export interface HookSpec {
  event: string;
  matcher?: string;
  hook: HookEvent;
  /** Extra fields of the handler, e.g. Gemini CLI's `name`. */
  extra?: Record<string, unknown>;
}

const HOOKS: HookSpec[] = [
  { event: "SessionStart", hook: "session-start" },
  { event: "PreToolUse", matcher: CODEX_EDIT_MATCHER, hook: "pre-edit" },
  // Every tool and every prompt: other agents' messages reach the model at the next one.
  { event: "PostToolUse", hook: "post-tool" },
  { event: "UserPromptSubmit", hook: "prompt" },
  { event: "Stop", hook: "stop" },
];

// --- Grouped hooks in JSON: {"hooks": {"Event": [{"matcher": …, "hooks": [{"type": "command", …}]}]}}
// (the shape Codex's hooks.json and Gemini CLI's settings.json share with Claude Code).

function hookGroup(ctx: SetupContext, client: string, h: HookSpec): Record<string, unknown> {
  const group: Record<string, unknown> = {};
  if (h.matcher) group.matcher = h.matcher;
  group.hooks = [{ ...h.extra, type: "command", command: hookCommand(ctx, client, h.hook) }];
  return group;
}

/** A group of ours: every handler in it runs `airlock hook <client> <event>`. */
function isOurGroup(g: unknown, client: string): boolean {
  const hooks = (g as { hooks?: unknown })?.hooks;
  return Array.isArray(hooks) && hooks.length > 0 && hooks.every((h) => isOurHookCommand((h as { command?: unknown })?.command, client));
}

function removeOurGroups(text: string, file: string, path: JSONPath, client: string): string {
  const arr = getAt(parseJsonc(text, file), path);
  if (!Array.isArray(arr)) return text;
  let t = text;
  for (let i = arr.length - 1; i >= 0; i--) if (isOurGroup(arr[i], client)) t = jsonDelete(t, [...path, i]);
  return t;
}

/** Our hook groups under `hooks.<Event>` of a JSON/JSONC file, merge-only and removable. */
export function groupedHooksPart(ctx: SetupContext, o: { client: string; file: string; hooks: HookSpec[] }): Part {
  const { client, file } = o;
  return {
    what: "hooks",
    path: file,
    install(text, rec) {
      let t = text;
      for (const h of o.hooks) {
        const path = ["hooks", h.event];
        const want = hookGroup(ctx, client, h);
        const arr = t === null ? undefined : getAt(parseJsonc(t, file), path);
        const ours = Array.isArray(arr) ? arr.filter((g) => isOurGroup(g, client)) : [];
        if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(want)) continue;
        if (t !== null && ours.length > 0) t = removeOurGroups(t, file, path, client);
        t = jsonAppend(t, file, path, want, rec);
      }
      return t ?? "";
    },
    remove(text, rec) {
      let t = text;
      for (const h of o.hooks) t = removeOurGroups(t, file, ["hooks", h.event], client);
      return pruneCreated(t, file, rec);
    },
    isInstalled(text) {
      if (text === null) return false;
      const doc = parseJsonc(text, file);
      return o.hooks.some((h) => {
        const arr = getAt(doc, ["hooks", h.event]);
        return Array.isArray(arr) && arr.some((g) => isOurGroup(g, client));
      });
    },
    isEmpty: (text) => text.trim() === "" || deepEmpty(parseJsonc(text, file)),
  };
}

// --- config.toml --------------------------------------------------------------------------------

type TomlTable = Record<string, unknown>;

function parseTomlFile(text: string, path: string): TomlTable {
  try {
    return parseToml(text) as TomlTable;
  } catch (err) {
    throw new AirlockError("config", `${path} is not valid TOML (${errorMessage(err)}); fix it or move it away, then run setup again`);
  }
}

/**
 * toml-patch's default layout for what it adds: `[mcp_servers]` + `airlock = { url = …, … }` in a
 * file without MCP servers; where the user's file already defines `mcp_servers` through
 * `[mcp_servers.x]` sections, `mcp_servers.airlock = { … }` in the root table (valid TOML: a
 * section may define a sub-table of a table made by dotted keys), leaving the sections untouched.
 */
function writeToml(before: string, doc: TomlTable): string {
  const after = patchToml(before, doc);
  // A file setup starts ends with a newline, like every file the other clients get.
  return before.trim() === "" && after !== "" && !after.endsWith("\n") ? `${after}\n` : after;
}

/**
 * `default_tools_approval_mode = "approve"` (openai/codex#17843: per-tool override, then this
 * server default, then `auto`): Airlock's tools run without an approval prompt, so `codex exec`
 * can claim before it edits instead of having the call refused for want of an approver.
 */
export function codexServer(ctx: SetupContext): Record<string, string> {
  return { url: ctx.url, bearer_token_env_var: TOKEN_ENV, default_tools_approval_mode: "approve" };
}

/** `mcp_servers.airlock` in a config.toml, through toml-patch (comments and layout kept). */
export function tomlServerPart(o: { path: string; entry: Record<string, unknown> }): Part {
  const isMcpServersRecord = (p: (string | number)[]) => p.length === 1 && p[0] === "mcp_servers";
  return {
    what: "MCP server",
    path: o.path,
    install(text, rec: CreatedRecord) {
      const t = text ?? "";
      const doc = parseTomlFile(t, o.path);
      const servers = doc.mcp_servers as TomlTable | undefined;
      if (servers !== undefined && (typeof servers !== "object" || servers === null || Array.isArray(servers))) {
        throw new AirlockError("config", `${o.path}: mcp_servers is not a table; fix it, then run setup again`);
      }
      if (JSON.stringify(servers?.[SERVER_KEY]) === JSON.stringify(o.entry)) return t;
      if (servers === undefined) {
        rec.paths ??= [];
        if (!rec.paths.some(isMcpServersRecord)) rec.paths.push(["mcp_servers"]);
      }
      doc.mcp_servers = { ...servers, [SERVER_KEY]: o.entry };
      return writeToml(t, doc);
    },
    remove(text, rec) {
      const doc = parseTomlFile(text, o.path);
      const servers = doc.mcp_servers as TomlTable | undefined;
      const created = rec.paths?.some(isMcpServersRecord) ?? false;
      rec.paths = rec.paths?.filter((p) => !isMcpServersRecord(p));
      if (!servers || typeof servers !== "object" || !(SERVER_KEY in servers)) return text;
      delete servers[SERVER_KEY];
      if (created && Object.keys(servers).length === 0) delete doc.mcp_servers;
      return writeToml(text, doc);
    },
    isInstalled: (text) => {
      if (text === null) return false;
      const servers = parseTomlFile(text, o.path).mcp_servers as TomlTable | undefined;
      return typeof servers === "object" && servers !== null && SERVER_KEY in servers;
    },
    isEmpty: (text) => text.trim() === "" || deepEmpty(parseTomlFile(text, o.path)),
  };
}

/** Codex's user folder: CODEX_HOME, else ~/.codex. */
export const codexHome = (ctx: SetupContext) => ctx.codexHome ?? join(ctx.home, ".codex");

export function codexPaths(ctx: SetupContext): { config: string; hooks: string; policy: string } {
  if (ctx.project) {
    const dir = join(ctx.project, ".codex");
    return { config: join(dir, "config.toml"), hooks: join(dir, "hooks.json"), policy: join(ctx.project, "AGENTS.md") };
  }
  const dir = codexHome(ctx);
  return { config: join(dir, "config.toml"), hooks: join(dir, "hooks.json"), policy: join(dir, "AGENTS.md") };
}

export const codex: Client = {
  id: ID,
  hookEvents: [...new Set(HOOKS.map((h) => h.hook))],
  name: "Codex",
  docs: [
    "https://developers.openai.com/codex/mcp",
    "https://developers.openai.com/codex/hooks",
    "https://developers.openai.com/codex/guides/agents-md",
  ],
  detect(ctx) {
    const dir = codexHome(ctx);
    if (existsSync(dir)) return dir;
    return Bun.which("codex") ?? undefined;
  },
  parts(ctx) {
    const p = codexPaths(ctx);
    return [
      tomlServerPart({ path: p.config, entry: codexServer(ctx) }),
      groupedHooksPart(ctx, { client: ID, file: p.hooks, hooks: HOOKS }),
      textBlockPart({ path: p.policy, block: policyBlock() }),
    ];
  },
  notes(ctx) {
    const file = ctx.tokenPath === join(ctx.home, ".airlock", "token") ? "~/.airlock/token" : ctx.tokenPath;
    const out = [
      `Codex reads the token from ${TOKEN_ENV} (it refuses a token written in config.toml). Add this line to your shell profile (~/.zshrc, ~/.bashrc) and start Codex from a new shell:\n\n  export ${TOKEN_ENV}="$(cat ${file})"`,
    ];
    if (ctx.project) out.push("Codex loads a project's .codex/config.toml and .codex/hooks.json only once you trust the project.");
    else out.push("If ~/.codex/AGENTS.override.md exists, Codex reads it instead of ~/.codex/AGENTS.md.");
    return out;
  },
};
