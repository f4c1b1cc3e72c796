// The change feed: watch_changes reads the journal from a revision onward and, when nothing
// matches yet, blocks until a matching change commits.
import * as v from "valibot";
import { changeView } from "../../domain/snapshot.ts";
import { clampedSeconds, text, textList, whole } from "./args.ts";
import { defineTool, TASK_WAIT_NOTE } from "./define.ts";

export const MAX_WATCH_LIMIT = 1000;

export const journalTools = [
  defineTool({
    name: "watch_changes",
    title: "Watch the change feed",
    blocking: true,
    readOnly: true,
    description:
      "Read what changed on this machine since a revision: locks granted/released/expired, tasks pushed/claimed/" +
      "completed, agents registered/departed, notes set (key and length only, never the value), counters, events, " +
      "pools and path claims. Answers {revision, changes:[{revision, at, kind, resource, agent_id?, reason?, ...}], " +
      "trimmed?} at once if there are matching changes after since_revision; otherwise blocks up to wait_seconds " +
      "(0–50, or 3600 as a task; default 0) until one arrives. Pass the answer's revision back as since_revision next time: no change " +
      "is ever missed between calls. trimmed:true means changes older than the journal's retention were dropped." + TASK_WAIT_NOTE,
    args: v.object({
      since_revision: v.optional(whole("since_revision", "The revision you saw last (0 for everything kept).", { min: 0 }), 0),
      wait_seconds: v.optional(clampedSeconds("wait_seconds", "Block up to this many seconds (0–50, or up to 3600 with the MCP tasks extension) when nothing matches. Default 0."), 0),
      kinds: v.optional(
        textList("kinds", 'Only these kinds: exact ("lock.granted") or prefixes ending in "." ("task."). Default: all.'),
      ),
      resource_prefix: v.optional(text("resource_prefix", "Only changes to resources whose name starts with this.")),
      limit: v.optional(whole("limit", `At most this many changes per answer (1–${MAX_WATCH_LIMIT}). Default 100.`, { min: 1, max: MAX_WATCH_LIMIT }), 100),
    }),
    async run(a, { kernel, signal }) {
      const r = await kernel.journal.watch(
        a.since_revision,
        a.wait_seconds * 1000,
        { kinds: a.kinds, resourcePrefix: a.resource_prefix },
        a.limit,
        signal,
      );
      return { revision: r.revision, changes: r.changes.map(changeView), ...(r.trimmed ? { trimmed: true } : {}) };
    },
  }),
];
