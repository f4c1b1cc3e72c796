// `airlock call TOOL [JSON]`: call any tool on the running daemon and print its JSON result.
// Exits 1 when the tool answered with an error.
import { defineCommand } from "citty";
import { AirlockError, errorMessage } from "../errors.ts";
import { callTool, PORT_ARG } from "./client.ts";

export const callCommand = defineCommand({
  meta: { name: "call", description: "Call a tool on the running daemon, e.g. airlock call increment_counter '{\"name\":\"seq\"}'" },
  args: {
    tool: { type: "positional", description: "Tool name (see tools/list)", required: true },
    json: { type: "positional", description: "Arguments as a JSON object (default {})", required: false },
    port: PORT_ARG,
  },
  async run({ args }) {
    let params: unknown = {};
    if (args.json) {
      try {
        params = JSON.parse(args.json);
      } catch (err) {
        throw new AirlockError("invalid_argument", `the arguments are not valid JSON: ${errorMessage(err)}`);
      }
      if (typeof params !== "object" || params === null || Array.isArray(params)) {
        throw new AirlockError("invalid_argument", "the arguments must be a JSON object, e.g. '{\"name\":\"x\"}'");
      }
    }
    const r = await callTool(args.tool, params as Record<string, unknown>, { port: args.port });
    console.log(JSON.stringify(r.value));
    if (r.isError) process.exitCode = 1;
  },
});
