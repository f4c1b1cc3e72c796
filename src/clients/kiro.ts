// Kiro: the MCP server in ~/.kiro/settings/mcp.json (user) or DIR/.kiro/settings/mcp.json
// (project, which wins), read by the Kiro IDE and Kiro CLI alike; the Kiro CLI hooks in an agent
// of our own, ~/.kiro/agents/airlock.json or DIR/.kiro/agents/airlock.json (Kiro CLI has hooks only
// inside an agent file, there is no global hooks file); the policy as a steering file,
// ~/.kiro/steering/airlock.md or DIR/.kiro/steering/airlock.md.
// Token: Kiro expands ${VAR} in mcp.json, so a project file (which may be committed) sends
// `Bearer ${AIRLOCK_TOKEN}`; the IDE is a GUI app that usually lacks a shell's variables, so the
// user file holds the literal token and is written 0600 (as Cursor's and Gemini CLI's).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { jsonServerPart, policyBlock, SERVER_KEY, textBlockPart, type Client, type SetupContext } from "./client.ts";
import { flatHooksPart, type FlatHook } from "./hook-files.ts";
import { KIRO_EDIT_TOOLS } from "./hooks/kiro.ts";

const ID = "kiro";
/** The agent setup writes: `kiro-cli chat --agent airlock`, or make it the default. */
export const KIRO_AGENT = "airlock";

// preToolUse without a matcher (every tool: the adapter picks out fs_write / write, whose names
// differ between releases); postToolUse and stop are not wired: Kiro reads neither's output.
const HOOKS: FlatHook[] = [
  { event: "agentSpawn", hook: "session-start" },
  { event: "userPromptSubmit", hook: "prompt" },
  { event: "preToolUse", hook: "pre-edit" },
];

export function kiroPaths(ctx: SetupContext): { mcp: string; agent: string; steering: string } {
  const base = join(ctx.project ?? ctx.home, ".kiro");
  return { mcp: join(base, "settings", "mcp.json"), agent: join(base, "agents", `${KIRO_AGENT}.json`), steering: join(base, "steering", "airlock.md") };
}

export function kiroServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { url: ctx.url };
  if (ctx.project) entry.headers = { Authorization: "Bearer ${AIRLOCK_TOKEN}" };
  else if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  entry.disabled = false;
  return entry;
}

/**
 * The agent file's own members: every tool (an agent without `tools` has none), the MCP servers of
 * mcp.json, and Airlock's tools without a confirmation (`@airlock`: every tool of that server).
 */
export const KIRO_AGENT_HEADER = {
  name: KIRO_AGENT,
  description: "Kiro's default tools with Airlock's coordination hooks (written by airlock setup kiro)",
  tools: ["*"],
  allowedTools: [`@${SERVER_KEY}`],
  includeMcpJson: true,
};

export const kiro: Client = {
  id: ID,
  hookEvents: HOOKS.map((h) => h.hook),
  name: "Kiro",
  docs: [
    "https://kiro.dev/docs/mcp/configuration",
    "https://kiro.dev/docs/cli/hooks",
    "https://kiro.dev/docs/cli/custom-agents/configuration-reference",
    "https://kiro.dev/docs/steering",
  ],
  detect(ctx) {
    const dir = join(ctx.home, ".kiro");
    if (existsSync(dir)) return dir;
    return Bun.which("kiro-cli") ?? Bun.which("kiro") ?? undefined;
  },
  parts(ctx) {
    const p = kiroPaths(ctx);
    return [
      jsonServerPart({ path: p.mcp, container: ["mcpServers"], entry: kiroServer(ctx), secret: !ctx.project && ctx.token !== undefined }),
      flatHooksPart(ctx, { client: ID, file: p.agent, hooks: HOOKS, commandKey: "command", header: KIRO_AGENT_HEADER }),
      textBlockPart({ path: p.steering, block: policyBlock() }),
    ];
  },
  notes(ctx) {
    const out = [
      `Kiro CLI runs hooks only inside an agent: start it with \`kiro-cli chat --agent ${KIRO_AGENT}\`, or make it the default with \`kiro-cli settings chat.defaultAgent ${KIRO_AGENT}\`. The Kiro IDE uses the MCP server and the steering file; its own agent hooks are set in the IDE.`,
      `The edit check covers Kiro's file-writing tools (${KIRO_EDIT_TOOLS.join(", ")}). Kiro reads no output of postToolUse or stop, so other agents' messages arrive with your next prompt and an offered slot is not announced at a stop.`,
    ];
    if (ctx.project) out.push("The project's .kiro/settings/mcp.json reads the token from AIRLOCK_TOKEN: start Kiro where `export AIRLOCK_TOKEN=\"$(cat ~/.airlock/token)\"` is set, or run setup without --project.");
    else if (ctx.token === undefined) out.push("No token yet: the server entry has no Authorization header; run setup again after `airlock daemon` has started once.");
    return out;
  },
};
