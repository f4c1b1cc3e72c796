// Claude Code: the MCP server in ~/.claude.json (user scope) or the project's .mcp.json, the hooks
// in ~/.claude/settings.json or .claude/settings.json, the policy in ~/.claude/CLAUDE.md or the
// project's CLAUDE.md. The token is never written: the entry's `headersHelper` (a command Claude
// Code runs at each connection and whose JSON output it sends as headers) reads AIRLOCK_TOKEN or
// the token file, so the same .mcp.json works for every teammate and survives a token rotation.
// settings.json also gets the permission rule `mcp__airlock`, so a headless agent may call the
// tools, and SessionStart runs on every (re)start, compaction included.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { JSONPath } from "jsonc-parser";
import {
  getAt,
  hookCommand,
  isOurHookCommand,
  jsonAppend,
  jsonDelete,
  jsonServerPart,
  parseJsonc,
  policyBlock,
  pruneCreated,
  textBlockPart,
  type Client,
  type HookEvent,
  type Part,
  type SetupContext,
} from "./client.ts";
import { shellQuote } from "../shell.ts";
import type { CreatedRecord } from "./files.ts";
import { CLAUDE_EDIT_TOOLS } from "./hooks/claude-code.ts";

const ID = "claude-code";
/** The tools that change files: the pre-edit hook runs before each of them. */
export const EDIT_MATCHER = CLAUDE_EDIT_TOOLS.join("|");

/** Every way a session (re)starts, compaction included: the context comes back each time. */
export const SESSION_START_MATCHER = "startup|resume|clear|compact";
/** The permission rule that lets a headless `claude -p` call Airlock's tools: the whole server. */
export const PERMISSION_RULE = "mcp__airlock";

const HOOKS: { event: string; matcher?: string; hook: HookEvent }[] = [
  { event: "SessionStart", matcher: SESSION_START_MATCHER, hook: "session-start" },
  { event: "PreToolUse", matcher: EDIT_MATCHER, hook: "pre-edit" },
  // Every tool and every prompt: other agents' messages reach the model at the next one.
  { event: "PostToolUse", hook: "post-tool" },
  { event: "UserPromptSubmit", hook: "prompt" },
  { event: "Stop", hook: "stop" },
];

/** The headersHelper command: prints {"Authorization":"Bearer …"} from AIRLOCK_TOKEN or the file. */
export function headersHelper(ctx: SetupContext): string {
  const file = ctx.tokenPath === join(ctx.home, ".airlock", "token") ? `"$HOME/.airlock/token"` : shellQuote(ctx.tokenPath);
  return `printf '{"Authorization":"Bearer %s"}' "\${AIRLOCK_TOKEN:-$(cat ${file})}"`;
}

export function serverEntry(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { type: "http", url: ctx.url };
  if (ctx.token !== undefined) entry.headersHelper = headersHelper(ctx);
  return entry;
}

function hookGroup(ctx: SetupContext, h: (typeof HOOKS)[number]): Record<string, unknown> {
  const group: Record<string, unknown> = {};
  if (h.matcher) group.matcher = h.matcher;
  group.hooks = [{ type: "command", command: hookCommand(ctx, ID, h.hook) }];
  return group;
}

/** An entry of ours: a group whose every command is `airlock hook claude-code <event>`. */
function isOurGroup(g: unknown): boolean {
  const hooks = (g as { hooks?: unknown })?.hooks;
  return Array.isArray(hooks) && hooks.length > 0 && hooks.every((h) => isOurHookCommand((h as { command?: unknown })?.command, ID));
}

function removeOurGroups(text: string, file: string, path: JSONPath): string {
  const arr = getAt(parseJsonc(text, file), path);
  if (!Array.isArray(arr)) return text;
  let t = text;
  for (let i = arr.length - 1; i >= 0; i--) if (isOurGroup(arr[i])) t = jsonDelete(t, [...path, i]);
  return t;
}

export function hooksPart(ctx: SetupContext, file: string): Part {
  return {
    what: "hooks",
    path: file,
    install(text, rec) {
      let t = text;
      for (const h of HOOKS) {
        const path = ["hooks", h.event];
        const want = hookGroup(ctx, h);
        const arr = t === null ? undefined : getAt(parseJsonc(t, file), path);
        const ours = Array.isArray(arr) ? arr.filter(isOurGroup) : [];
        if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(want)) continue;
        if (t !== null && ours.length > 0) t = removeOurGroups(t, file, path);
        t = jsonAppend(t, file, path, want, rec);
      }
      return t ?? "";
    },
    remove(text, rec) {
      let t = text;
      for (const h of HOOKS) t = removeOurGroups(t, file, ["hooks", h.event]);
      return pruneCreated(t, file, rec);
    },
    isInstalled(text) {
      if (text === null) return false;
      const doc = parseJsonc(text, file);
      return HOOKS.some((h) => {
        const arr = getAt(doc, ["hooks", h.event]);
        return Array.isArray(arr) && arr.some(isOurGroup);
      });
    },
    isEmpty: (text) => text.trim() === "" || JSON.stringify(parseJsonc(text, file)) === "{}",
  };
}

const ALLOW: JSONPath = ["permissions", "allow"];

function ruleIndexes(text: string, file: string): number[] {
  const arr = getAt(parseJsonc(text, file), ALLOW);
  return Array.isArray(arr) ? arr.flatMap((r, i) => (r === PERMISSION_RULE ? [i] : [])) : [];
}

/**
 * `permissions.allow` gets `mcp__airlock` (every tool of the server named airlock), so that an
 * agent, headless too, can claim before it edits; without it `claude -p` refuses every Airlock
 * call. Merge-only; --remove takes out exactly that entry and the containers setup created.
 * It shares settings.json with the hooks part, so it prunes only the containers under
 * `permissions` and leaves the record of the rest to that part.
 */
export function permissionPart(file: string): Part {
  const ours = (p: (string | number)[]) => p[0] === "permissions";
  return {
    what: "permission",
    path: file,
    install(text, rec) {
      if (text !== null && text.trim() !== "" && ruleIndexes(text, file).length > 0) return text;
      rec.added = [...new Set([...(rec.added ?? []), PERMISSION_RULE])];
      const mine: CreatedRecord = {};
      const t = jsonAppend(text, file, ALLOW, PERMISSION_RULE, mine);
      rec.paths = [...(rec.paths ?? []), ...(mine.paths ?? []).filter((p) => !rec.paths?.some((q) => JSON.stringify(q) === JSON.stringify(p)))];
      return t;
    },
    remove(text, rec) {
      let t = text;
      // Only a rule setup added: one the user had before stays.
      if (rec.added?.includes(PERMISSION_RULE)) for (const i of ruleIndexes(t, file).reverse()) t = jsonDelete(t, [...ALLOW, i]);
      rec.added = rec.added?.filter((r) => r !== PERMISSION_RULE);
      const mine: CreatedRecord = { paths: rec.paths?.filter(ours) ?? [] };
      t = pruneCreated(t, file, mine);
      rec.paths = rec.paths?.filter((p) => !ours(p));
      return t;
    },
    isInstalled: (text) => text !== null && text.trim() !== "" && ruleIndexes(text, file).length > 0,
    isEmpty: (text) => text.trim() === "" || JSON.stringify(parseJsonc(text, file)) === "{}",
  };
}

export function claudePaths(ctx: SetupContext): { mcp: string; settings: string; policy: string } {
  if (ctx.project) {
    return { mcp: join(ctx.project, ".mcp.json"), settings: join(ctx.project, ".claude", "settings.json"), policy: join(ctx.project, "CLAUDE.md") };
  }
  // With CLAUDE_CONFIG_DIR, Claude Code keeps all of these there, .claude.json included.
  const dir = ctx.claudeConfigDir;
  if (dir) return { mcp: join(dir, ".claude.json"), settings: join(dir, "settings.json"), policy: join(dir, "CLAUDE.md") };
  return { mcp: join(ctx.home, ".claude.json"), settings: join(ctx.home, ".claude", "settings.json"), policy: join(ctx.home, ".claude", "CLAUDE.md") };
}

export const claudeCode: Client = {
  id: ID,
  hookEvents: [...new Set(HOOKS.map((h) => h.hook))],
  name: "Claude Code",
  docs: ["https://code.claude.com/docs/en/mcp", "https://docs.claude.com/en/docs/claude-code/hooks", "https://docs.anthropic.com/en/docs/claude-code/memory"],
  detect(ctx) {
    if (ctx.claudeConfigDir && existsSync(ctx.claudeConfigDir)) return ctx.claudeConfigDir;
    if (existsSync(join(ctx.home, ".claude.json"))) return join(ctx.home, ".claude.json");
    if (existsSync(join(ctx.home, ".claude"))) return join(ctx.home, ".claude");
    return Bun.which("claude") ?? undefined;
  },
  parts(ctx) {
    const p = claudePaths(ctx);
    return [
      jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: serverEntry(ctx) }),
      hooksPart(ctx, p.settings),
      permissionPart(p.settings),
      textBlockPart({ path: p.policy, block: policyBlock() }),
    ];
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
    if (ctx.project) {
      out.push("Claude Code asks each user to approve a project's .mcp.json servers the first time it opens the project, and ignores a project's permissions.allow until the folder is trusted.");
    }
    return out;
  },
};
