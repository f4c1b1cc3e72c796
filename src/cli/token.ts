// `airlock token`: where the token is, and how an agent gets it. It never prints the token for
// pasting into a client's config: `airlock setup <client>` writes configs that read the token
// themselves (a headersHelper, an environment variable), so a teammate's copy and a rotation
// both keep working. A literal token pasted into a config does neither.
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
    console.log("The config it writes reads the token when the client connects: nothing to paste, and a new token needs no edit.");
    if (token) {
      const send = fromEnv ? '"Authorization: Bearer $AIRLOCK_TOKEN"' : `"Authorization: Bearer $(cat ${path})"`;
      console.log(`\nScripts and curl: -H ${send}`);
    }
  },
});
