// `airlock daemon`: serve MCP over HTTP (TCP, and a Unix socket for sandboxes) until stopped.
import { defineCommand } from "citty";
import { runDaemon } from "../daemon.ts";

export const daemonCommand = defineCommand({
  meta: { name: "daemon", description: "Run the daemon in the foreground (the default command)" },
  args: {
    port: { type: "string", description: "Port to listen on (default 27183, or AIRLOCK_PORT; 0 picks a free one)" },
    host: { type: "string", description: "Address to bind (default 127.0.0.1; anything else requires a token)" },
    db: { type: "string", description: "SQLite file (default ~/.airlock/state.db, or AIRLOCK_DB)" },
    store: {
      type: "string",
      description: "postgres://... : share the state with other daemons in one PostgreSQL database (or AIRLOCK_STORE, or AIRLOCK_STORE_FILE naming a 0600 file that holds the URL)",
    },
    socket: {
      type: "string",
      description: "Unix socket to listen on as well, for sandboxes (default ~/.airlock/airlock.sock, or AIRLOCK_SOCKET; off or --no-socket: TCP only)",
    },
    durability: {
      type: "string",
      description: "full: every answer waits for its fsync, batched by group commit (default); normal: survives a daemon crash, not a power loss (or AIRLOCK_DURABILITY)",
    },
  },
  async run({ args }) {
    // citty reads --no-socket as socket=false.
    const socket = (args.socket as string | boolean | undefined) === false ? "off" : args.socket;
    await runDaemon({ port: args.port, host: args.host, db: args.db, store: args.store, durability: args.durability, socket });
  },
});
