// `airlock hook <client> <event>`: the hooks agent clients run (reads the client's JSON on stdin).
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";

export const hookCommand = defineCommand({
  meta: { name: "hook", description: "Run a client hook (not built yet)" },
  args: {},
  run() {
    throw new AirlockError("unavailable", "airlock hook is not built yet");
  },
});
