// Presence tools: register_agent, unregister_agent, list_agents.
import * as v from "valibot";
import { MAX_ID_LENGTH, text, ttlArgs, ttlSeconds } from "./args.ts";
import { compact, defineTool, inSeconds } from "./define.ts";

export const DEFAULT_HEARTBEAT_TTL_SECONDS = 60; // v2's default; heartbeat every ~20 s

export const presenceTools = [
  defineTool({
    name: "register_agent",
    title: "Announce yourself (heartbeat)",
    description:
      "Announce that you are alive, and call it again as a heartbeat well within ttl_seconds (default 60; every " +
      "~20 s is good). If your heartbeat lapses, the moment it does every lock you hold is released to the next " +
      "waiter and every task you claimed is requeued, so a crashed agent never blocks the others.",
    args: v.object({
      agent_id: text("agent_id", "Who you are, e.g. `agent:claude-session-abc`.", MAX_ID_LENGTH),
      ...ttlArgs("Seconds until you count as gone unless you call again (> 0).", DEFAULT_HEARTBEAT_TTL_SECONDS),
      role: v.optional(text("role", "Optional role, e.g. `lead`.", 64)),
    }),
    async run(a, { kernel }) {
      const expiresAt = await kernel.presence.register(a.agent_id, ttlSeconds(a, DEFAULT_HEARTBEAT_TTL_SECONDS)! * 1000, a.role);
      return { registered: true, expires_in_seconds: inSeconds(kernel, expiresAt) };
    },
  }),

  defineTool({
    name: "unregister_agent",
    title: "Leave",
    description: "Say you are done: releases every lock you hold (waking the next waiters) and requeues the tasks you claimed.",
    args: v.object({ agent_id: text("agent_id", "Your agent_id.", MAX_ID_LENGTH) }),
    async run(a, { kernel }) {
      await kernel.presence.unregister(a.agent_id);
      return { unregistered: true };
    },
  }),

  defineTool({
    name: "list_agents",
    title: "List live agents",
    readOnly: true,
    description: "List the agents whose heartbeat is live, with the locks and tasks each holds.",
    args: v.object({}),
    run(_a, { kernel }) {
      // One read: what each agent holds as of one moment (rows only: beside row bodies).
      return kernel.ctx.rowRead("agents", "", function* () {
        const out = [];
        for (const ag of yield* kernel.presence.listTx()) {
          out.push(
            compact({
              agent_id: ag.agent_id,
              expires_in_seconds: inSeconds(kernel, ag.expires_at),
              role: ag.role,
              locks: yield* kernel.locks.heldByTx(ag.agent_id),
              tasks: yield* kernel.tasks.claimedByTx(ag.agent_id),
            }),
          );
        }
        return out;
      });
    },
  }),
];
