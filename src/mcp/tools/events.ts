// Event tools: signal_event, wait_for_event, clear_event.
import * as v from "valibot";
import { clampedSeconds, text, truncated } from "./args.ts";
import { defineTool, TASK_WAIT_NOTE } from "./define.ts";

const name = text("name", "The event's name, e.g. `schema-ready`.");

export const eventTools = [
  defineTool({
    name: "signal_event",
    title: "Signal an event",
    description:
      "Signal a named event: its generation goes up by one (1 on the first signal) and every agent waiting on it wakes.",
    args: v.object({ name }),
    async run(a, { kernel }) {
      return { generation: await kernel.events.signal(a.name) };
    },
  }),

  defineTool({
    name: "wait_for_event",
    title: "Wait for an event",
    blocking: true,
    readOnly: true,
    description:
      "Block until a named event's generation is greater than last_seen_generation, or wait_seconds (default 25, max 50, or 3600 as a task) " +
      "pass. Answers {generation, fired}. Pass back the generation you got last time: a signal that fired between " +
      "your calls is then never missed. Start with 0." + TASK_WAIT_NOTE,
    args: v.object({
      name,
      last_seen_generation: v.optional(truncated("last_seen_generation", "The generation you saw last (0 at first)."), 0),
      wait_seconds: v.optional(clampedSeconds("wait_seconds", "Block up to this many seconds (0–50, or up to 3600 with the MCP tasks extension). Default 25."), 25),
    }),
    async run(a, { kernel, signal }) {
      return kernel.events.wait(a.name, a.last_seen_generation, a.wait_seconds * 1000, signal);
    },
  }),

  defineTool({
    name: "clear_event",
    title: "Reset an event",
    description: "Reset an event's generation to 0. Waiters wake with fired:false.",
    args: v.object({ name }),
    async run(a, { kernel }) {
      await kernel.events.clear(a.name);
      return { cleared: true };
    },
  }),
];
