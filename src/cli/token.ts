// `airlock token`: where the token is, and how an agent gets it. It never prints the token for
// pasting into a client's config: `airlock setup <client>` writes it. Claude Code (headersHelper),
// Codex ($AIRLOCK_TOKEN), opencode ({file:…}) and the project files of Cursor and Gemini CLI read
// the token when the client connects, so a rotation needs no edit there; the user configs of
// Cursor, Gemini CLI, VS Code and Windsurf hold a copy (0600), so after a rotation run
// `airlock setup <client>` again for those.
import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { tokenPath } from "../config/dirs.ts";
import { env } from "../config/env.ts";
import { clientToken } from "../config/token.ts";
import { CLIENTS } from "../clients/index.ts";
import { daemonUrl, PORT_ARG } from "./client.ts";

export const tokenCommand = defineCommand({
  meta: { name: "token", description: "Show where the bearer token is, and how agents and scripts send it" },
  args: { port: PORT_ARG },
  run({ args }) {
    const path = tokenPath();
    const token = clientToken();
    const url = `${daemonUrl({ port: args.port }).replace("127.0.0.1", "localhost")}/`;
    const fromEnv = env.token !== undefined;
    console.log(`Token: ${fromEnv ? "AIRLOCK_TOKEN (environment)" : existsSync(path) ? path : "none yet"}`);
    console.log(`MCP URL: ${url}`);
    if (!token) {
      console.log("\nNo token yet: the daemon creates one on its first start on Linux (macOS runs without one).");
      console.log("Start it first (`airlock install-service`, or `airlock daemon`), then connect your agents.");
    }
    console.log(`\nConnect an agent: airlock setup <client>   (${CLIENTS.map((c) => c.id).join(", ")})`);
    console.log("Nothing to paste. Claude Code, Codex and opencode read the token when they connect, so a new token needs no edit;");
    console.log("the user configs of Cursor, Gemini CLI, VS Code and Windsurf hold a copy: after a new token, run airlock setup <client> again for those.");
    if (token) {
      const send = fromEnv ? '"Authorization: Bearer $AIRLOCK_TOKEN"' : `"Authorization: Bearer $(cat ${path})"`;
      console.log(`\nScripts and curl: -H ${send}`);
    }
  },
});
