// The stdio server entry, for clients that start an MCP server as a command instead of reaching
// a URL (JetBrains Junie; any client whose HTTP transport is missing or broken): `airlock mcp`,
// the bridge to the running daemon (src/cli/bridge.ts, docs/clients.md "stdio"). No token and no
// port in it: the bridge finds both the way every airlock command does (SPEC §8), so the entry
// survives a token rotation and a daemon on another port.
import { join } from "node:path";
import type { SetupContext } from "./client.ts";
import { airlockArgv } from "./command.ts";

export interface StdioEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export function stdioServer(ctx: SetupContext): StdioEntry {
  const [command, ...rest] = ctx.airlockArgv ?? airlockArgv({ project: ctx.project !== undefined });
  const entry: StdioEntry = { command: command!, args: [...rest, "mcp"] };
  // A user-scope entry for an airlock home other than ~/.airlock names it (never a project's).
  if (ctx.project === undefined && ctx.airlockHome !== join(ctx.home, ".airlock")) entry.env = { AIRLOCK_HOME: ctx.airlockHome };
  return entry;
}
