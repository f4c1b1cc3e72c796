// The ordered tool catalogue: v2's 22 tools in v2's order, then our extensions.
import { toJsonSchema } from "@valibot/to-json-schema";
import type { Tool } from "./define.ts";
import { eventTools } from "./events.ts";
import { lockTools } from "./locks.ts";
import { noteTools } from "./notes.ts";
import { presenceTools } from "./presence.ts";
import { taskTools } from "./tasks.ts";

export const TOOLS: readonly Tool[] = [...lockTools, ...noteTools, ...presenceTools, ...eventTools, ...taskTools];

export const TOOLS_BY_NAME: ReadonlyMap<string, Tool> = new Map(TOOLS.map((t) => [t.name, t]));

/** The tools/list answer, computed once: JSON Schemas generated from the valibot schemas. */
export const TOOL_LIST = TOOLS.map((t) => {
  const schema = toJsonSchema(t.args, { errorMode: "ignore" }) as Record<string, unknown>;
  delete schema.$schema;
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: schema,
    annotations: {
      title: t.title,
      readOnlyHint: t.readOnly === true,
      destructiveHint: false,
      openWorldHint: false,
    },
  };
});
