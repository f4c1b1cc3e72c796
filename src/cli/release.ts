// `airlock release TOKEN`: give back a slot that `airlock wait` printed (or withdraw a queued
// request by its wake_token). Idempotent, like release_slot: releasing twice is not an error.
// release_slot and release_paths answer {released:false} alike for a token released before and
// for one never issued; what the CLI can tell apart is a word that is no token at all.
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";
import { tool } from "./wait.ts";
import { PORT_ARG } from "./client.ts";

/** Every token the daemon issues: 16 random bytes in hex (src/domain/tokens.ts). */
const TOKEN_SHAPE = /^[0-9a-f]{32}$/;

/**
 * What a release answered, for a human: "released"; for a token the daemon does not have,
 * "unknown token" (and exit 1) when it cannot be one the daemon issued, else "unknown or
 * already released" (exit 0: releasing twice is fine, and the daemon keeps no record of
 * released tokens to say which).
 */
export function releaseOutcome(released: boolean, token: string, what: string): string {
  if (released) return "released";
  if (!TOKEN_SHAPE.test(token)) {
    throw new AirlockError("invalid_argument", `unknown token ${JSON.stringify(token)}: no ${what} was issued with it (a ${what} is 32 hex digits)`);
  }
  return "unknown or already released";
}

export const releaseCommand = defineCommand({
  meta: { name: "release", description: "Release a slot by its slot_token (or withdraw a queued request by its wake_token)" },
  args: {
    token: { type: "positional", description: "The slot_token that `airlock wait` printed", required: true },
    port: PORT_ARG,
  },
  async run({ args }) {
    const r = await tool<{ released: boolean }>("release_slot", { slot_token: args.token }, { port: args.port });
    console.log(releaseOutcome(r.released, args.token, "slot_token"));
  },
});
