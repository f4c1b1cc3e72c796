// `airlock setup [client]`: connect an agent client to Airlock (MCP server entry, policy, hooks).
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";

export const setupCommand = defineCommand({
  meta: { name: "setup", description: "Connect an agent client to Airlock (not built yet)" },
  args: {},
  run() {
    throw new AirlockError("unavailable", "airlock setup is not built yet");
  },
});
