// `airlock release TOKEN`: give back a slot that `airlock wait` printed (or withdraw a queued
// request by its wake_token). Idempotent, like release_slot: releasing twice is not an error.
import { defineCommand } from "citty";
import { tool } from "./wait.ts";
import { PORT_ARG } from "./client.ts";

export const releaseCommand = defineCommand({
  meta: { name: "release", description: "Release a slot by its slot_token (or withdraw a queued request by its wake_token)" },
  args: {
    token: { type: "positional", description: "The slot_token that `airlock wait` printed", required: true },
    port: PORT_ARG,
  },
  async run({ args }) {
    const r = await tool<{ released: boolean }>("release_slot", { slot_token: args.token }, { port: args.port });
    console.log(r.released ? "released" : "already released");
  },
});
