// Any other MCP client: nothing is written, setup prints what to paste (the server entry in the
// common `mcpServers` JSON shape, over HTTP and as the stdio bridge `airlock mcp`, and the policy for the client's instructions file).
import { SERVER_KEY, type Client, type SetupContext } from "./client.ts";
import { policyText } from "./policy.ts";
import { stdioServer } from "./stdio.ts";

export function genericSnippet(ctx: SetupContext): string {
  const server: Record<string, unknown> = { type: "http", url: ctx.url };
  if (ctx.token !== undefined) server.headers = { Authorization: `Bearer <contents of ${ctx.tokenPath}>` };
  return [
    "MCP server (HTTP; most clients take this `mcpServers` shape; the header is needed on Linux):",
    JSON.stringify({ mcpServers: { [SERVER_KEY]: server } }, null, 2),
    "",
    "Or, for a client that only starts servers as commands (stdio), the bridge `airlock mcp` (it finds the daemon and the token itself):",
    JSON.stringify({ mcpServers: { [SERVER_KEY]: stdioServer(ctx) } }, null, 2),
    "",
    "Policy (put it where your client's model reads instructions, e.g. AGENTS.md):",
    policyText(),
  ].join("\n");
}

export const generic: Client = {
  id: "generic",
  name: "Any other MCP client (prints what to paste)",
  docs: ["https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http"],
  detect: () => undefined,
  parts: () => [],
  notes: (ctx) => [genericSnippet(ctx)],
};
