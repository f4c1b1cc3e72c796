// `airlock token`: where the token is, and MCP config ready to paste into each client.
import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { tokenPath } from "../config/dirs.ts";
import { env } from "../config/env.ts";
import { clientToken } from "../config/token.ts";
import { daemonUrl } from "./client.ts";

export const tokenCommand = defineCommand({
  meta: { name: "token", description: "Show the bearer token and MCP config for Claude Code, Cursor and others" },
  args: {
    port: { type: "string", description: "Port the daemon listens on (default 27183 or AIRLOCK_PORT)" },
  },
  run({ args }) {
    const path = tokenPath();
    const token = clientToken();
    const url = daemonUrl({ port: args.port }).replace("127.0.0.1", "localhost");
    const source = env.token !== undefined ? "AIRLOCK_TOKEN (environment)" : existsSync(path) ? path : "none yet";
    console.log(`Token: ${source}`);
    if (!token) {
      console.log("No token is configured: the daemon creates one on first start on Linux (macOS runs without one).");
    }
    const header = token ? ` --header "Authorization: Bearer ${token}"` : "";
    console.log(`\nClaude Code:\n  claude mcp add --transport http airlock ${url}${header}\n`);
    const server: Record<string, unknown> = { type: "http", url };
    if (token) server.headers = { Authorization: `Bearer ${token}` };
    console.log("Cursor, Windsurf and other JSON-config clients (mcp.json):");
    console.log(JSON.stringify({ mcpServers: { airlock: server } }, null, 2));
  },
});
