// The ordered tool catalogue: v2's 22 tools in v2's order, then our extensions.
import { toJsonSchema } from "@valibot/to-json-schema";
import type { Tool } from "./define.ts";
import { eventTools } from "./events.ts";
import { journalTools } from "./journal.ts";
import { lockTools } from "./locks.ts";
import { machineTools } from "./machine.ts";
import { messageTools } from "./messages.ts";
import { noteTools } from "./notes.ts";
import { pathTools } from "./paths.ts";
import { poolTools } from "./pools.ts";
import { presenceTools } from "./presence.ts";
import { taskTools } from "./tasks.ts";
import { worktreeTools } from "./worktrees.ts";

/** v2's tools, in the order v2's tools/list gave them: clients and docs rely on that order. */
export const V2_TOOL_NAMES = [
  "lock_resource", "unlock_resource", "renew_lock", "list_locks", "lock_resources",
  "set_note", "get_note", "list_notes", "delete_note", "set_note_if", "increment_counter",
  "register_agent", "unregister_agent", "list_agents",
  "signal_event", "wait_for_event", "clear_event",
  "push_task", "claim_next_task", "complete_task", "fail_task", "list_tasks",
] as const;

const ALL_TOOLS: readonly Tool[] = [...lockTools, ...noteTools, ...presenceTools, ...eventTools, ...taskTools, ...poolTools, ...machineTools, ...pathTools, ...journalTools, ...messageTools, ...worktreeTools];
const V2_SET: ReadonlySet<string> = new Set(V2_TOOL_NAMES);

/** v2's 22 tools in v2's order, then the extensions in group order. */
export const TOOLS: readonly Tool[] = [
  ...V2_TOOL_NAMES.map((n) => {
    const t = ALL_TOOLS.find((x) => x.name === n);
    if (!t) throw new Error(`the v2 tool ${n} is missing from the catalogue`);
    return t;
  }),
  ...ALL_TOOLS.filter((t) => !V2_SET.has(t.name)),
];

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
