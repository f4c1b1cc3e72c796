// `airlock pools` shows every pool with its holders and queue; `airlock pool set` changes a
// pool's capacity. configure_pool is compare-and-set, so `pool set` reads the version, writes,
// and on a conflict (someone changed it in between) reads again and retries.
import { hostname, userInfo } from "node:os";
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";
import { PORT_ARG } from "./client.ts";
import { type PoolInfo, renderPool } from "./format.ts";
import { countFlag, tool } from "./wait.ts";

const MAX_TRIES = 5; // a conflict means a concurrent change; five in a row means something is looping

const port = PORT_ARG;

export const poolsCommand = defineCommand({
  meta: { name: "pools", description: "List pools: capacity, who holds slots and who waits, in order" },
  args: {
    json: { type: "boolean", description: "Print list_pools' JSON for scripts" },
    port,
  },
  async run({ args }) {
    const pools = await tool<PoolInfo[]>("list_pools", {}, { port: args.port });
    if (args.json) return console.log(JSON.stringify(pools, null, 2));
    console.log(pools.length ? pools.map((p) => renderPool(p).join("\n    ")).join("\n") : "(no pools)");
  },
});

function defaultAuthor(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `cli@${hostname()}`;
  }
}

const poolSetCommand = defineCommand({
  meta: { name: "set", description: "Set a pool's capacity (creating the pool if it does not exist)" },
  args: {
    name: { type: "positional", description: "Pool name, e.g. heavy", required: true },
    capacity: { type: "string", description: "Capacity units that may run at once (>= 1)", required: true },
    reason: { type: "string", description: "Why (recorded with the change)", required: true },
    "offer-seconds": { type: "string", description: "How long freed capacity is held for an absent request (default 30)" },
    author: { type: "string", description: "Who is changing it (default user@host)" },
    port,
  },
  async run({ args }) {
    const client = { port: args.port };
    const capacity = countFlag(args.capacity, "--capacity")!;
    const offerSeconds = countFlag(args["offer-seconds"], "--offer-seconds");
    const author = args.author ?? defaultAuthor();
    for (let i = 0; i < MAX_TRIES; i++) {
      const pools = await tool<PoolInfo[]>("list_pools", {}, client);
      const version = pools.find((p) => p.pool === args.name)?.version ?? 0;
      const r = await tool<{ configured: boolean; version: number; error?: string }>(
        "configure_pool",
        { pool: args.name, capacity, expected_version: version, author, reason: args.reason, ...(offerSeconds ? { offer_seconds: offerSeconds } : {}) },
        client,
      );
      if (r.configured) return console.log(`pool ${args.name}: capacity ${capacity}, version ${r.version}`);
    }
    throw new AirlockError("store", `pool ${args.name} changed under every one of ${MAX_TRIES} tries; run \`airlock pools\` and try again`);
  },
});

export const poolCommand = defineCommand({
  meta: { name: "pool", description: "Configure pools: airlock pool set NAME --capacity N --reason TEXT" },
  subCommands: { set: poolSetCommand },
});
