// `airlock setup [client] [--project DIR] [--dry-run] [--remove]`: connect an agent client to
// Airlock (MCP server entry, policy, hooks), merge-only and undoable. Bare `airlock setup` lists
// the clients found on this machine and what each has installed.
import { defineCommand } from "citty";
import { applyParts, diffOf, installedParts, setupContext, type Change } from "../clients/client.ts";
import { CLIENTS, findClient } from "../clients/index.ts";
import { AirlockError } from "../errors.ts";

function summary(changes: Change[], verb: string): string[] {
  return changes.map((c) => `${verb} ${c.path} (${c.what.join(", ")})${c.after === null ? " — file removed" : c.before === null ? " — new file" : ""}`);
}

export const setupCommand = defineCommand({
  meta: { name: "setup", description: "Connect an agent client to Airlock: MCP server, policy and hooks (bare: list clients)" },
  args: {
    client: { type: "positional", required: false, description: `One of: ${CLIENTS.map((c) => c.id).join(", ")}` },
    project: { type: "string", description: "Write the project's config in DIR instead of your user config" },
    "dry-run": { type: "boolean", description: "Print a unified diff of every file it would change; change nothing" },
    remove: { type: "boolean", description: "Take out exactly what setup added" },
  },
  async run({ args }) {
    const ctx = setupContext({ project: args.project });
    if (!args.client && args.remove) {
      throw new AirlockError("usage", `airlock setup: --remove needs a client: airlock setup <client> --remove (one of: ${CLIENTS.map((c) => c.id).join(", ")})`);
    }
    if (!args.client) {
      for (const c of CLIENTS) {
        const where = c.detect(ctx);
        const parts = c.parts(ctx);
        const have = installedParts(parts);
        const state = parts.length === 0 ? "prints what to paste" : have.length ? `installed: ${have.join(", ")}` : "not set up";
        console.log(`${c.id.padEnd(12)} ${where ? `found (${where})` : "not found"}; ${state}`);
      }
      console.log(`\nRun: airlock setup <client> [--project DIR] [--dry-run] [--remove]`);
      return;
    }
    const client = findClient(args.client);
    if (!client) throw new AirlockError("invalid_argument", `unknown client "${args.client}"; choose one of: ${CLIENTS.map((c) => c.id).join(", ")}`);
    const dryRun = Boolean(args["dry-run"]);
    const remove = Boolean(args.remove);
    const changes = await applyParts(client.parts(ctx), { remove, dryRun, airlockHome: ctx.airlockHome });
    if (dryRun) {
      process.stdout.write(diffOf(changes));
      if (changes.length === 0) console.log(`${client.name}: nothing to change`);
    } else {
      const lines = summary(changes, remove ? "updated" : "wrote");
      if (lines.length === 0 && client.parts(ctx).length > 0) console.log(`${client.name}: already ${remove ? "removed" : "set up"}; nothing changed`);
      for (const l of lines) console.log(l);
    }
    if (!remove) for (const n of client.notes?.(ctx) ?? []) console.log(`\n${n}`);
  },
});
