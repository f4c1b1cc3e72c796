// Gemini CLI: the MCP server and the hooks both live in settings.json, ~/.gemini/settings.json (user)
// or DIR/.gemini/settings.json (project); the policy in ~/.gemini/GEMINI.md or DIR/GEMINI.md.
// Token: Gemini CLI resolves $VAR / ${VAR} in every string of settings.json when it loads them, so
// a project file (which may be committed) sends `Bearer ${AIRLOCK_TOKEN}` and never holds the token;
// the user file holds the literal token, written 0600, so it works without any shell setup (like
// Cursor's user file).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { jsonServerPart, policyBlock, textBlockPart, type Client, type Part, type SetupContext } from "./client.ts";
import { groupedHooksPart, type HookSpec } from "./codex.ts";
import { GEMINI_EDIT_TOOLS } from "./hooks/gemini-cli.ts";

const ID = "gemini-cli";
/** BeforeTool matcher (a regex over the tool name): the built-in tools that write a file. */
export const GEMINI_EDIT_MATCHER = GEMINI_EDIT_TOOLS.join("|");

// `name` identifies each hook in Gemini CLI's /hooks panel and in hooksConfig.disabled.
const HOOKS: HookSpec[] = [
  { event: "SessionStart", hook: "session-start", extra: { name: "airlock-session-start" } },
  { event: "BeforeTool", matcher: GEMINI_EDIT_MATCHER, hook: "pre-edit", extra: { name: "airlock-pre-edit" } },
  // Every tool and every prompt: other agents' messages reach the model at the next one.
  { event: "AfterTool", hook: "post-tool", extra: { name: "airlock-post-tool" } },
  { event: "BeforeAgent", hook: "prompt", extra: { name: "airlock-prompt" } },
  { event: "AfterAgent", hook: "stop", extra: { name: "airlock-stop" } },
];

export function geminiPaths(ctx: SetupContext): { settings: string; policy: string } {
  if (ctx.project) return { settings: join(ctx.project, ".gemini", "settings.json"), policy: join(ctx.project, "GEMINI.md") };
  return { settings: join(ctx.home, ".gemini", "settings.json"), policy: join(ctx.home, ".gemini", "GEMINI.md") };
}

/**
 * `trust: true` is Gemini CLI's per-server switch that "bypasses all tool call confirmations for
 * this server": Airlock's own tools then run headless too (Claude Code's `mcp__airlock` rule).
 */
export function geminiServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { httpUrl: ctx.url, trust: true };
  if (ctx.project) entry.headers = { Authorization: "Bearer ${AIRLOCK_TOKEN}" };
  else if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  return entry;
}

export const geminiCli: Client = {
  id: ID,
  hookEvents: [...new Set(HOOKS.map((h) => h.hook))],
  name: "Gemini CLI",
  docs: [
    "https://geminicli.com/docs/tools/mcp-server",
    "https://geminicli.com/docs/reference/configuration",
    "https://geminicli.com/docs/hooks/reference",
    "https://geminicli.com/docs/cli/gemini-md",
    "https://geminicli.com/docs/cli/trusted-folders",
  ],
  detect(ctx) {
    const dir = join(ctx.home, ".gemini");
    if (existsSync(dir)) return dir;
    return Bun.which("gemini") ?? undefined;
  },
  parts(ctx) {
    const p = geminiPaths(ctx);
    const parts: Part[] = [
      jsonServerPart({ path: p.settings, container: ["mcpServers"], entry: geminiServer(ctx), secret: !ctx.project && ctx.token !== undefined }),
      groupedHooksPart(ctx, { client: ID, file: p.settings, hooks: HOOKS }),
      textBlockPart({ path: p.policy, block: policyBlock() }),
    ];
    return parts;
  },
  notes(ctx) {
    if (ctx.project) {
      return [
        "The project's .gemini/settings.json reads the token from AIRLOCK_TOKEN: start Gemini CLI from a shell where `export AIRLOCK_TOKEN=\"$(cat ~/.airlock/token)\"` is set, or run setup without --project.",
        "Gemini CLI ignores a project's .gemini/settings.json until you trust the folder, and warns before it runs project hooks that are new or changed.",
      ];
    }
    if (ctx.token === undefined) return ["No token yet (the daemon makes one on first start on Linux): the server entry has no Authorization header; run setup again after `airlock daemon` has started once."];
    return [];
  },
};
