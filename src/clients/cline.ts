// Cline: the MCP server in cline_mcp_settings.json, the CLI's ~/.cline/data/settings/ and, when the
// VS Code extension is installed, its global storage (…/Code/User/globalStorage/
// saoudrizwan.claude-dev/settings/); the hooks as executable files named after each hook in
// ~/Documents/Cline/Hooks/ (user) or DIR/.clinerules/hooks/ (project); the policy as a rule file,
// ~/Documents/Cline/Rules/airlock.md or DIR/.clinerules/airlock.md.
// Token: no variable expansion is documented for cline_mcp_settings.json, and the extension runs
// in a GUI app, so the user files hold the literal token and are written 0600. Cline has no
// project MCP file, so --project writes only the hooks and the rule.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { hookCommand, isOurHookCommand, jsonServerPart, policyBlock, textBlockPart, type Client, type HookEvent, type Part, type SetupContext } from "./client.ts";

const ID = "cline";
/** The extension's id, the folder of its global storage. */
const EXTENSION = "saoudrizwan.claude-dev";

const HOOKS: { file: string; hook: HookEvent }[] = [
  { file: "TaskStart", hook: "session-start" },
  { file: "TaskResume", hook: "session-start" },
  { file: "PreToolUse", hook: "pre-edit" },
  { file: "PostToolUse", hook: "post-tool" },
  { file: "UserPromptSubmit", hook: "prompt" },
];

/** VS Code's user folder (the one cline's extension storage hangs off), per platform. */
function vscodeUser(ctx: SetupContext): string {
  return process.platform === "darwin" ? join(ctx.home, "Library", "Application Support", "Code", "User") : join(ctx.xdgConfigHome, "Code", "User");
}

export function clinePaths(ctx: SetupContext): { mcp: string[]; hooksDir: string; rule: string } {
  if (ctx.project) return { mcp: [], hooksDir: join(ctx.project, ".clinerules", "hooks"), rule: join(ctx.project, ".clinerules", "airlock.md") };
  const mcp = [join(ctx.home, ".cline", "data", "settings", "cline_mcp_settings.json")];
  const ext = join(vscodeUser(ctx), "globalStorage", EXTENSION);
  if (existsSync(ext)) mcp.push(join(ext, "settings", "cline_mcp_settings.json"));
  const docs = join(ctx.home, "Documents", "Cline");
  return { mcp, hooksDir: join(docs, "Hooks"), rule: join(docs, "Rules", "airlock.md") };
}

export function clineServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { type: "streamableHttp", url: ctx.url };
  if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  entry.disabled = false;
  return entry;
}

/** The script of one hook: it runs `airlock hook cline EVENT`, which reads the JSON on stdin. */
export function hookScript(ctx: SetupContext, hook: HookEvent): string {
  return `#!/bin/sh\n# Airlock's Cline hook (airlock setup cline; taken out by airlock setup cline --remove)\n${hookCommand(ctx, ID, hook)}\n`;
}

const isOurScript = (text: string) => text.split("\n").some((l) => isOurHookCommand(l, ID));

/**
 * One hook file. A hook is a whole file, so a file of the user's under that name cannot be merged
 * into: it is left alone, and setup says so (notes).
 */
function hookFilePart(ctx: SetupContext, dir: string, h: { file: string; hook: HookEvent }): Part {
  return {
    what: "hooks",
    path: join(dir, h.file),
    executable: true,
    install: (text) => (text === null || isOurScript(text) ? hookScript(ctx, h.hook) : text),
    remove: (text) => (isOurScript(text) ? "" : text),
    isInstalled: (text) => text !== null && isOurScript(text),
    isEmpty: (text) => text.trim() === "",
  };
}

export const cline: Client = {
  id: ID,
  hookEvents: [...new Set(HOOKS.map((h) => h.hook))],
  name: "Cline",
  docs: [
    "https://docs.cline.bot/mcp/configuring-mcp-servers",
    "https://docs.cline.bot/customization/hooks",
    "https://docs.cline.bot/features/hooks/hook-reference",
    "https://docs.cline.bot/customization/cline-rules",
  ],
  detect(ctx) {
    for (const p of [join(ctx.home, ".cline"), join(vscodeUser(ctx), "globalStorage", EXTENSION)]) if (existsSync(p)) return p;
    return Bun.which("cline") ?? undefined;
  },
  parts(ctx) {
    const p = clinePaths(ctx);
    return [
      ...p.mcp.map((path) => jsonServerPart({ path, container: ["mcpServers"], entry: clineServer(ctx), secret: ctx.token !== undefined })),
      ...HOOKS.map((h) => hookFilePart(ctx, p.hooksDir, h)),
      textBlockPart({ path: p.rule, block: policyBlock() }),
    ];
  },
  notes(ctx) {
    const p = clinePaths(ctx);
    const out = ["Cline runs hooks only when they are enabled: Settings, Feature Settings, Enable Hooks (hooks do not run on Windows). Cline has no hook that can hold the end of a task, so an offered slot is not announced at a stop."];
    for (const h of HOOKS) {
      const f = join(p.hooksDir, h.file);
      if (existsSync(f) && !isOurScript(readFileSync(f, "utf8"))) {
        out.push(`${f} is your own hook (a Cline hook is one file): add the line \`${hookCommand(ctx, ID, h.hook)}\` to it, or Airlock's ${h.hook} does not run.`);
      }
    }
    if (ctx.project) out.push("Cline has no project MCP file: run `airlock setup cline` (user scope) for the server entry.");
    else if (ctx.token === undefined) out.push("No token yet: the server entry has no Authorization header; run setup again after `airlock daemon` has started once.");
    return out;
  },
};
