// `airlock status [--json]`: asks the running daemon (so it shows waiters and queue depth), and
// says where it runs and how it was found; when no daemon answers, reads the database directly
// (the SQLite file, or the shared PostgreSQL store when one is configured) and says where it
// looked for a daemon; when neither exists, says so.
import { existsSync } from "node:fs";
import { defineCommand } from "citty";
import { defaultDbPath } from "../config/dirs.ts";
import { buildSnapshot, type Snapshot } from "../domain/snapshot.ts";
import { AirlockError } from "../errors.ts";
import { resolveStore } from "../config/settings.ts";
import { openStore } from "../store/db.ts";
import { openPgStore } from "../store/pg/index.ts";
import { redactUrl } from "../store/pg/url.ts";
import type { Endpoint } from "../config/discovery.ts";
import { type DaemonPlace, describePlace, PORT_ARG, rpc, rpcAt } from "./client.ts";
import { renderStatus } from "./format.ts";

async function placeOf(ep: Endpoint, port: string | undefined): Promise<DaemonPlace> {
  let pid = ep.pid ?? null;
  if (pid === null) {
    try {
      pid = ((await rpc("airlock/identity", {}, { port }, 2000)) as { pid?: number }).pid ?? null;
    } catch {
      // an older daemon: no pid to show
    }
  }
  return { url: ep.unix ? null : ep.url, socket: ep.unix ?? ep.record?.socket ?? null, pid, found_by: ep.via };
}

export async function loadSnapshot(
  port?: string,
  db?: string,
  storeFlag?: string,
): Promise<{ snapshot: Snapshot; where: string; daemon?: DaemonPlace; lookedAt?: string }> {
  try {
    const { result, endpoint } = await rpcAt("airlock/status", {}, { port }, 5000);
    const daemon = await placeOf(endpoint, port);
    return { snapshot: result as Snapshot, where: describePlace(daemon), daemon };
  } catch (err) {
    if (!(err instanceof AirlockError) || err.code !== "unavailable") throw err;
    const skipped = Array.isArray(err.details?.skipped) ? (err.details.skipped as string[]) : [];
    const lookedAt = `${typeof err.details?.places === "string" ? err.details.places : "the usual places"}${skipped.length ? ` (${skipped.join(", ")})` : ""}`;
    // A shared store (--store, AIRLOCK_STORE or AIRLOCK_STORE_FILE): what the team's daemons
    // keep there, as of now; nobody is blocked on this machine's daemon, since it is down.
    const shared = resolveStore({ store: storeFlag, db });
    if (shared !== undefined) {
      const store = await openPgStore(shared, { readonly: true });
      try {
        return { snapshot: await store.read(buildSnapshot(Date.now())), where: `${redactUrl(shared)}; no daemon answered at ${lookedAt}`, lookedAt };
      } finally {
        await store.close();
      }
    }
    const path = db ?? defaultDbPath();
    if (!existsSync(path)) {
      throw new AirlockError("unavailable", `no Airlock daemon answers at ${lookedAt} and there is no database at ${path}; start one with \`airlock daemon\` or \`airlock install-service\``);
    }
    const store = openStore(path, { readonly: true });
    try {
      return { snapshot: store.read(buildSnapshot(Date.now())), where: `${path}; no daemon answered at ${lookedAt}`, lookedAt };
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
    const { snapshot, where, daemon, lookedAt } = await loadSnapshot(args.port, args.db, args.store);
    const json = { ...snapshot, ...(daemon ? { daemon } : {}), ...(lookedAt ? { looked_at: lookedAt } : {}) };
    console.log(args.json ? JSON.stringify(json, null, 2) : renderStatus(snapshot, where));
  },
});
