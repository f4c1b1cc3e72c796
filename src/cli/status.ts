// `airlock status [--json]`: asks the running daemon (so it shows waiters and queue depth);
// when no daemon answers, reads the database directly (the SQLite file, or the shared
// PostgreSQL store when one is configured); when neither exists, says so.
import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { defaultDbPath } from "../config/dirs.ts";
import { buildSnapshot, type Snapshot } from "../domain/snapshot.ts";
import { AirlockError } from "../errors.ts";
import { resolveStore } from "../config/settings.ts";
import { openStore } from "../store/db.ts";
import { openPgStore, redactUrl } from "../store/pg.ts";
import { daemonUrl, PORT_ARG, rpc } from "./client.ts";
import { renderStatus } from "./format.ts";

export async function loadSnapshot(port?: string, db?: string, storeFlag?: string): Promise<{ snapshot: Snapshot; where: string }> {
  const url = daemonUrl({ port });
  try {
    return { snapshot: (await rpc("airlock/status", {}, { port }, 5000)) as Snapshot, where: url.replace(/^http:\/\//, "") };
  } catch (err) {
    if (!(err instanceof AirlockError) || err.code !== "unavailable") throw err;
    // A shared store (--store, AIRLOCK_STORE or AIRLOCK_STORE_FILE): what the team's daemons
    // keep there, as of now; nobody is blocked on this machine's daemon, since it is down.
    const shared = resolveStore({ store: storeFlag, db });
    if (shared !== undefined) {
      const store = await openPgStore(shared, { readonly: true });
      try {
        return { snapshot: await store.read(buildSnapshot(Date.now())), where: redactUrl(shared) };
      } finally {
        await store.close();
      }
    }
    const path = db ?? defaultDbPath();
    if (!existsSync(path)) {
      throw new AirlockError("unavailable", `no Airlock daemon answers at ${url} and there is no database at ${path}; start one with \`airlock daemon\` or \`airlock install-service\``);
    }
    const store = openStore(path, { readonly: true });
    try {
      return { snapshot: store.read(buildSnapshot(Date.now())), where: path };
    } finally {
      store.close();
    }
  }
}

export const statusCommand = defineCommand({
  meta: { name: "status", description: "Show locks, agents, queues and waiters" },
  args: {
    json: { type: "boolean", description: "Print JSON for scripts" },
    port: PORT_ARG,
    db: { type: "string", description: "Database to read when the daemon is down" },
    store: { type: "string", description: "Shared PostgreSQL store to read when the daemon is down (or AIRLOCK_STORE, AIRLOCK_STORE_FILE)" },
  },
  async run({ args }) {
    const { snapshot, where } = await loadSnapshot(args.port, args.db, args.store);
    console.log(args.json ? JSON.stringify(snapshot, null, 2) : renderStatus(snapshot, where));
  },
});
