// `airlock release TOKEN`: give back a slot that `airlock wait` printed (or withdraw a queued
// request by its wake_token). Idempotent, like release_slot: releasing twice is not an error.
// A token the daemon never issued is refused as unknown (exit 1): the daemon tells the two
// apart (`unknown: true`) from its journal, which keeps every token's prefix for its retention.
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";
import { tool } from "./wait.ts";
import { PORT_ARG } from "./client.ts";

/** What release_slot and release_paths answer. */
export interface Released {
  released: boolean;
  /** No slot or claim was ever issued with this token (as far back as the journal keeps). */
  unknown?: true;
}

/** What a release answered, for a human: "released", "already released", or (thrown) unknown. */
export function releaseOutcome(r: Released, token: string, what: string): string {
  if (r.released) return "released";
  if (r.unknown) throw new AirlockError("invalid_argument", `unknown ${what} ${JSON.stringify(token)}: none was issued with it (check that it was copied whole)`);
  return "already released";
}

export const releaseCommand = defineCommand({
  meta: { name: "release", description: "Release a slot by its slot_token (or withdraw a queued request by its wake_token)" },
  args: {
    token: { type: "positional", description: "The slot_token that `airlock wait` printed", required: true },
    port: PORT_ARG,
  },
  async run({ args }) {
    const r = await tool<Released>("release_slot", { slot_token: args.token }, { port: args.port });
    console.log(releaseOutcome(r, args.token, "slot_token"));
  },
});
