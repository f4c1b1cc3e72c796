// `airlock daemon`: serve MCP over HTTP until stopped.
import { defineCommand } from "citty";
import { runDaemon } from "../daemon.ts";

export const daemonCommand = defineCommand({
  meta: { name: "daemon", description: "Run the daemon in the foreground (the default command)" },
  args: {
    port: { type: "string", description: "Port to listen on (default 27183, or AIRLOCK_PORT; 0 picks a free one)" },
    host: { type: "string", description: "Address to bind (default 127.0.0.1; anything else requires a token)" },
    db: { type: "string", description: "SQLite file (default ~/.airlock/state.db, or AIRLOCK_DB)" },
    durability: {
      type: "string",
      description: "full: every answer waits for its fsync, batched by group commit (default); normal: survives a daemon crash, not a power loss (or AIRLOCK_DURABILITY)",
    },
  },
  async run({ args }) {
    await runDaemon({ port: args.port, host: args.host, db: args.db, durability: args.durability });
  },
});
