// `airlock hook <client> <event>`: the command an agent client runs as a hook. It reads the
// client's hook JSON on stdin and answers in that client's documented format (see
// src/clients/hooks/). A hook sits in the path of every edit, so it never breaks its client:
// an unknown client or event, malformed input, a daemon that is down or errs, or anything
// slower than HOOK_DEADLINE_MS ends in exit 0 (allow) with one warning line on stderr and, for a
// known client, the same warning where the client shows it to the user.
import { defineCommand } from "citty";
import { errorMessage } from "../errors.ts";
import { hookAdapter, HOOK_ADAPTERS } from "../clients/hooks/index.ts";
import {
  DAEMON_TIMEOUT_MS,
  failOpen,
  HOOK_DEADLINE_MS,
  HOOK_EVENTS,
  type HookDeps,
  type HookEvent,
  type HookOutput,
  readStdin,
  runHook,
} from "../clients/hooks/shared.ts";
import type { DeliverResult } from "../clients/hooks/inbox.ts";
import type { Snapshot } from "../domain/snapshot.ts";
import { PORT_ARG, rpc } from "./client.ts";

/** The daemon over HTTP, every call bounded by DAEMON_TIMEOUT_MS; a tool error rejects. */
function daemonDeps(port: string | undefined): HookDeps {
  const o = { port };
  return {
    async tool(name, args) {
      const r = (await rpc("tools/call", { name, arguments: args }, o, DAEMON_TIMEOUT_MS)) as { content: { text: string }[]; isError?: boolean };
      const value = JSON.parse(r.content[0]!.text) as unknown;
      if (r.isError) throw new Error(`${name}: ${(value as { error?: string }).error ?? JSON.stringify(value)}`);
      return value;
    },
    status: async () => (await rpc("airlock/status", {}, o, DAEMON_TIMEOUT_MS)) as Snapshot,
    deliver: async (agentId, point, held) => (await rpc("airlock/deliver", { agent_id: agentId, point, held }, o, DAEMON_TIMEOUT_MS)) as DeliverResult,
  };
}

async function emit(out: HookOutput): Promise<never> {
  if (out.stdout) await Bun.write(Bun.stdout, out.stdout);
  if (out.stderr) await Bun.write(Bun.stderr, out.stderr);
  process.exit(out.code);
}

const clients = HOOK_ADAPTERS.map((a) => a.client).join(", ");

export const hookCommand = defineCommand({
  meta: {
    name: "hook",
    description: `Run a client hook: reads the client's hook JSON on stdin (clients: ${clients}; events: ${HOOK_EVENTS.join(", ")})`,
  },
  args: {
    client: { type: "positional", description: `The agent client: ${clients}`, required: false },
    event: { type: "positional", description: `The event: ${HOOK_EVENTS.join(", ")}`, required: false },
    port: PORT_ARG,
  },
  async run({ args }) {
    const client = String(args.client ?? "");
    const event = String(args.event ?? "");
    const adapter = hookAdapter(client);
    if (!adapter) return emit({ code: 0, stderr: `airlock hook: unknown client "${client}" (one of ${clients}); allowing\n` });
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      const why = `unknown event "${event}" (one of ${HOOK_EVENTS.join(", ")})`;
      const out = adapter.warnUser({ code: 0 }, `Airlock hook: ${why}; nothing was checked. Run \`airlock setup ${client}\` again.`);
      return emit({ ...out, stderr: `${out.stderr ?? ""}airlock hook ${client}: ${why}; allowing\n` });
    }
    const ev = event as HookEvent;
    // The last line of defence against a hang: whatever is still pending, allow and leave.
    const watchdog = setTimeout(() => {
      void emit(failOpen(adapter, ev, `no answer within ${HOOK_DEADLINE_MS} ms`));
    }, HOOK_DEADLINE_MS);
    let out: HookOutput;
    try {
      out = await runHook(adapter, ev, await readStdin(), daemonDeps(args.port));
    } catch (err) {
      out = failOpen(adapter, ev, errorMessage(err));
    }
    clearTimeout(watchdog);
    return emit(out);
  },
});
