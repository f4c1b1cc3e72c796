// `airlock log`: the journal, one change a line (local clock times, human durations; --json
// keeps the daemon's fields as they are), from a revision onward; --follow (-f) keeps watching
// (watch_changes, 50 s at a time) until Ctrl-C.
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";
import { callTool, PORT_ARG } from "./client.ts";
import { type Change, formatChange } from "./format.ts";

interface Answer {
  revision: number;
  changes: Change[];
  trimmed?: true;
}


export const logCommand = defineCommand({
  meta: { name: "log", description: "Print the change journal (locks, tasks, agents, notes, pools, claims), one change a line" },
  args: {
    since: { type: "string", description: "Start after this revision (default 0: everything kept)" },
    follow: { type: "boolean", alias: "f", description: "Keep printing new changes until Ctrl-C" },
    json: { type: "boolean", description: "One JSON object per line" },
    kinds: { type: "string", description: "Only these kinds, comma-separated: exact (lock.granted) or prefixes (task.)" },
    resource: { type: "string", description: "Only resources whose name starts with this" },
    port: PORT_ARG,
  },
  async run({ args }) {
    let since = 0;
    if (args.since !== undefined) {
      since = Number(args.since);
      if (!/^\d+$/.test(args.since.trim())) throw new AirlockError("invalid_argument", `--since must be a revision number (got ${JSON.stringify(args.since)})`);
    }
    const kinds = args.kinds
      ?.split(",")
      .map((k) => k.trim())
      .filter((k) => k !== "");
    const filter = {
      ...(kinds && kinds.length > 0 ? { kinds } : {}),
      ...(args.resource ? { resource_prefix: args.resource } : {}),
    };
    let warned = false;
    for (;;) {
      const r = await callTool("watch_changes", { since_revision: since, wait_seconds: args.follow ? 50 : 0, limit: 1000, ...filter }, { port: args.port });
      if (r.isError) throw new AirlockError("internal", `watch_changes failed: ${JSON.stringify(r.value)}`);
      const a = r.value as Answer;
      if (a.trimmed && !warned) {
        warned = true;
        process.stderr.write(`older changes than revision ${since} were trimmed from the journal (retention)\n`);
      }
      for (const c of a.changes) console.log(args.json ? JSON.stringify(c) : formatChange(c));
      const more = a.changes.length >= 1000; // a full page: read on at once
      since = a.revision;
      if (!args.follow && !more) return;
    }
  },
});
