// `airlock status [--json]`: asks the running daemon (so it shows waiters and queue depth);
// when no daemon answers, reads the database directly; when neither exists, says so.
import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { defaultDbPath } from "../config/dirs.ts";
import { buildSnapshot, type Snapshot } from "../domain/snapshot.ts";
import { AirlockError } from "../errors.ts";
import { openStore } from "../store/db.ts";
import { daemonUrl, PORT_ARG, rpc } from "./client.ts";
import { renderStatus } from "./format.ts";

export async function loadSnapshot(port?: string, db?: string): Promise<{ snapshot: Snapshot; where: string }> {
  const url = daemonUrl({ port });
  try {
    return { snapshot: (await rpc("airlock/status", {}, { port }, 5000)) as Snapshot, where: url.replace(/^http:\/\//, "") };
  } catch (err) {
    if (!(err instanceof AirlockError) || err.code !== "unavailable") throw err;
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
  },
  async run({ args }) {
    const { snapshot, where } = await loadSnapshot(args.port, args.db);
    console.log(args.json ? JSON.stringify(snapshot, null, 2) : renderStatus(snapshot, where));
  },
});
