// `airlock hand-over TOKEN AGENT [--note TEXT]`: pass a lock, path claim or slot this shell holds
// to another (registered, live) agent (hand_over). Prints the new holder's token; the agent gets
// it in a message too, and TOKEN stops working.
import { defineCommand } from "citty";
import { PORT_ARG } from "./client.ts";
import { tool } from "./wait.ts";

export const handOverCommand = defineCommand({
  meta: { name: "hand-over", description: "Hand a held lock, path claim or slot to another live agent (it gets a message with the new token)" },
  args: {
    token: { type: "positional", description: "The lock_token, claim_token or slot_token", required: true },
    agent: { type: "positional", description: "The agent to hand it to", required: true },
    note: { type: "string", description: "What the agent should know" },
    port: PORT_ARG,
  },
  async run({ args }) {
    const r = await tool<{ to_agent: string; token: string; fence: number; resource: string }>(
      "hand_over",
      { token: args.token, to_agent: args.agent, ...(args.note ? { note: args.note } : {}) },
      { port: args.port },
    );
    console.log(`handed ${r.resource} to ${r.to_agent} (fence ${r.fence}); its token: ${r.token}`);
  },
});
