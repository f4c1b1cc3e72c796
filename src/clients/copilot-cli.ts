// GitHub Copilot CLI: the MCP server in $COPILOT_HOME/mcp-config.json (user, ~/.copilot by default)
// or DIR/.mcp.json (project); the hooks in a file of our own, $COPILOT_HOME/hooks/airlock.json or
// DIR/.github/hooks/airlock.json (Copilot loads every *.json there); the policy in
// $COPILOT_HOME/copilot-instructions.md or DIR/.github/copilot-instructions.md.
// Token: Copilot CLI resolves ${VAR} in an HTTP server's headers when it connects (seen with
// 1.0.102: `Bearer ${AIRLOCK_TOKEN}` arrived as the exported value), so neither file ever holds
// the token; setup says to export AIRLOCK_TOKEN.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { jsonServerPart, policyBlock, textBlockPart, type Client, type SetupContext } from "./client.ts";
import { flatHooksPart, type FlatHook } from "./hook-files.ts";

const ID = "copilot-cli";

// Command hooks of the camelCase format (`version: 1`): no matcher, so preToolUse runs for every
// tool and the adapter picks out the edits; postToolUse and userPromptSubmitted carry other
// agents' messages to the model.
const HOOKS: FlatHook[] = [
  { event: "sessionStart", hook: "session-start", extra: { type: "command" } },
  { event: "preToolUse", hook: "pre-edit", extra: { type: "command" } },
  { event: "postToolUse", hook: "post-tool", extra: { type: "command" } },
  { event: "userPromptSubmitted", hook: "prompt", extra: { type: "command" } },
  { event: "agentStop", hook: "stop", extra: { type: "command" } },
];

export function copilotPaths(ctx: SetupContext): { mcp: string; hooks: string; policy: string } {
  if (ctx.project) {
    return { mcp: join(ctx.project, ".mcp.json"), hooks: join(ctx.project, ".github", "hooks", "airlock.json"), policy: join(ctx.project, ".github", "copilot-instructions.md") };
  }
  const home = ctx.copilotHome ?? join(ctx.home, ".copilot");
  return { mcp: join(home, "mcp-config.json"), hooks: join(home, "hooks", "airlock.json"), policy: join(home, "copilot-instructions.md") };
}

/** `tools: ["*"]` is Copilot's own default made explicit: every Airlock tool is offered to the model. */
export function copilotServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { type: "http", url: ctx.url };
  if (ctx.project || ctx.token !== undefined) entry.headers = { Authorization: "Bearer ${AIRLOCK_TOKEN}" };
  entry.tools = ["*"];
  return entry;
}

/** The shell line that gives a CLI the token (the absolute token path when AIRLOCK_HOME moves it). */
export function tokenExportLine(ctx: SetupContext): string {
  const file = ctx.tokenPath === join(ctx.home, ".airlock", "token") ? "~/.airlock/token" : ctx.tokenPath;
  return `export AIRLOCK_TOKEN="$(cat ${file})"`;
}

export const copilotCli: Client = {
  id: ID,
  hookEvents: HOOKS.map((h) => h.hook),
  name: "GitHub Copilot CLI",
  docs: [
    "https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers",
    "https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference",
    "https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-custom-instructions",
  ],
  detect(ctx) {
    const dir = ctx.copilotHome ?? join(ctx.home, ".copilot");
    if (existsSync(dir)) return dir;
    return Bun.which("copilot") ?? undefined;
  },
  parts(ctx) {
    const p = copilotPaths(ctx);
    return [
      jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: copilotServer(ctx) }),
      flatHooksPart(ctx, { client: ID, file: p.hooks, hooks: HOOKS, commandKey: "bash", header: { version: 1 } }),
      textBlockPart({ path: p.policy, block: policyBlock() }),
    ];
  },
  notes(ctx) {
    const out = [`Copilot CLI reads the token from AIRLOCK_TOKEN: start it from a shell where \`${tokenExportLine(ctx)}\` is set.`];
    if (ctx.project) {
      out.push(
        "Copilot CLI loads a project's .mcp.json and .github/hooks only in a trusted folder; in `copilot -p` only with GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP=true and GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true (or --trust-folder).",
      );
    }
    if (!ctx.project && ctx.token === undefined) out.push("No token yet: the server entry has no Authorization header; run setup again after `airlock daemon` has started once.");
    return out;
  },
};
