// `airlock mcp`: the stdio bridge (bridge.ts) for clients that start an MCP server as a command
// (JetBrains Junie, any client whose HTTP transport is missing or broken) and for sandboxes that
// see only the socket. It finds the daemon as every command does (SPEC §8) and exits 0 when
// stdin closes. Nothing but MCP messages goes to stdout; warnings go to stderr.
import { defineCommand } from "citty";
import { runBridge } from "./bridge.ts";
import { PORT_ARG } from "./client.ts";

/** stdin split into lines (a trailing \r dropped), as the stdio transport frames messages. */
async function* stdinLines(): AsyncIterable<string> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of Bun.stdin.stream()) {
    buf += dec.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      yield buf.slice(0, i).replace(/\r$/, "");
      buf = buf.slice(i + 1);
    }
  }
  if (buf !== "") yield buf;
}

function writeLine(line: string): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
}

export const mcpCommand = defineCommand({
  meta: { name: "mcp", description: "MCP over stdio, forwarded to the running daemon (for stdio-only clients and sandboxes)" },
  args: {
    port: PORT_ARG,
  },
  async run({ args }) {
    // The client went away (stdout closed): nothing can be answered any more.
    process.stdout.on("error", () => process.exit(0));
    await runBridge({ lines: stdinLines(), write: writeLine, warn: (t) => process.stderr.write(`${t}\n`) }, { port: args.port });
    process.exit(0);
  },
});
