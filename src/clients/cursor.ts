// Cursor: the MCP server in ~/.cursor/mcp.json (user) or .cursor/mcp.json (project), the hooks in
// ~/.cursor/hooks.json or .cursor/hooks.json (hooks v1: sessionStart, preToolUse, stop), and the
// policy as an always-applied project rule, .cursor/rules/airlock.mdc (Cursor's user rules live in
// its settings UI, not in a file, so the user scope prints the policy to paste instead).
// Token: Cursor is a GUI app that usually does not see a shell's AIRLOCK_TOKEN, so the user file
// holds the literal token and is written 0600; a project file may be committed, so it reads
// ${env:AIRLOCK_TOKEN} (Cursor's documented interpolation) and never holds the token.
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
  jsonSet,
  parseJsonc,
  policyBlock,
  pruneCreated,
  textBlockPart,
  type Client,
  type HookEvent,
  type Part,
  type SetupContext,
} from "./client.ts";
import { CURSOR_EDIT_TOOLS } from "./hooks/cursor.ts";
import { policyText } from "./policy.ts";

const ID = "cursor";
/** Cursor's file-writing agent tools (preToolUse matcher): the very list the pre-edit hook checks. */
export const CURSOR_EDIT_MATCHER = CURSOR_EDIT_TOOLS.join("|");

const HOOKS: { event: string; matcher?: string; hook: HookEvent }[] = [
  { event: "sessionStart", hook: "session-start" },
  { event: "preToolUse", matcher: CURSOR_EDIT_MATCHER, hook: "pre-edit" },
  // Every tool: other agents' messages reach the model at the next tool boundary.
  { event: "postToolUse", hook: "post-tool" },
  { event: "stop", hook: "stop" },
];

export const RULE_HEADER = "---\ndescription: Airlock coordination policy (written by `airlock setup cursor`)\nalwaysApply: true\n---\n";

export function cursorPaths(ctx: SetupContext): { mcp: string; hooks: string; rule?: string } {
  const base = join(ctx.project ?? ctx.home, ".cursor");
  return { mcp: join(base, "mcp.json"), hooks: join(base, "hooks.json"), rule: ctx.project ? join(base, "rules", "airlock.mdc") : undefined };
}

export function cursorServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { url: ctx.url };
  if (ctx.project) entry.headers = { Authorization: "Bearer ${env:AIRLOCK_TOKEN}" };
  else if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  return entry;
}

function isOurs(h: unknown): boolean {
  return isOurHookCommand((h as { command?: unknown })?.command, ID);
}

function removeOurs(text: string, file: string, path: JSONPath): string {
  const arr = getAt(parseJsonc(text, file), path);
  if (!Array.isArray(arr)) return text;
  let t = text;
  for (let i = arr.length - 1; i >= 0; i--) if (isOurs(arr[i])) t = jsonDelete(t, [...path, i]);
  return t;
}

function cursorHooksPart(ctx: SetupContext, file: string): Part {
  return {
    what: "hooks",
    path: file,
    install(text, rec) {
      let t = text;
      if (t === null || getAt(parseJsonc(t, file), ["version"]) === undefined) {
        t = jsonSet(t, file, ["version"], 1, rec);
        rec.paths = [...(rec.paths ?? []), ["version"]];
      }
      for (const h of HOOKS) {
        const path = ["hooks", h.event];
        const want = { command: hookCommand(ctx, ID, h.hook), ...(h.matcher ? { matcher: h.matcher } : {}) };
        const arr = getAt(parseJsonc(t, file), path);
        const ours = Array.isArray(arr) ? arr.filter(isOurs) : [];
        if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(want)) continue;
        if (ours.length > 0) t = removeOurs(t, file, path);
        t = jsonAppend(t, file, path, want, rec);
      }
      return t;
    },
    remove(text, rec) {
      let t = text;
      for (const h of HOOKS) t = removeOurs(t, file, ["hooks", h.event]);
      const addedVersion = rec.paths?.some((p) => p.length === 1 && p[0] === "version");
      rec.paths = rec.paths?.filter((p) => !(p.length === 1 && p[0] === "version"));
      t = pruneCreated(t, file, rec);
      if (addedVersion && getAt(parseJsonc(t, file), ["hooks"]) === undefined) t = jsonDelete(t, ["version"]);
      return t;
    },
    isInstalled(text) {
      if (text === null) return false;
      const doc = parseJsonc(text, file);
      return HOOKS.some((h) => {
        const arr = getAt(doc, ["hooks", h.event]);
        return Array.isArray(arr) && arr.some(isOurs);
      });
    },
    // A hooks.json setup created holds nothing of the user's once only {"version": 1} is left.
    isEmpty(text) {
      const doc = parseJsonc(text, file) as Record<string, unknown>;
      const rest = Object.keys(doc).filter((k) => k !== "version" && !(k === "hooks" && JSON.stringify(doc.hooks) === "{}"));
      return rest.length === 0;
    },
  };
}

export const cursor: Client = {
  id: ID,
  hookEvents: [...new Set(HOOKS.map((h) => h.hook))],
  name: "Cursor",
  docs: ["https://cursor.com/docs/mcp", "https://cursor.com/docs/hooks.md"],
  detect(ctx) {
    const dir = join(ctx.home, ".cursor");
    if (existsSync(dir)) return dir;
    return Bun.which("cursor") ?? Bun.which("cursor-agent") ?? undefined;
  },
  parts(ctx) {
    const p = cursorPaths(ctx);
    const parts: Part[] = [jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: cursorServer(ctx), secret: !ctx.project && ctx.token !== undefined }), cursorHooksPart(ctx, p.hooks)];
    if (p.rule) parts.push(textBlockPart({ path: p.rule, block: policyBlock(), header: RULE_HEADER }));
    return parts;
  },
  notes(ctx) {
    // Cursor shows a hook's stderr only in its Hooks output panel, never in the chat.
    const failOpen =
      "When a hook cannot check an edit (the daemon down, say), it lets the edit through and says so on stderr only, which Cursor shows in its Hooks output panel, not in the chat: look there, or run `airlock doctor`.";
    if (ctx.project) return ["The project's .cursor/mcp.json reads the token from AIRLOCK_TOKEN: start Cursor where `export AIRLOCK_TOKEN=$(cat ~/.airlock/token)` is set (Linux), or run setup without --project.", failOpen];
    return [`Cursor keeps user rules in Settings → Rules, not in a file: paste this there (or run setup with --project DIR for a project rule):\n\n${policyText()}`, failOpen];
  },
};
