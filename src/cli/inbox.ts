// `airlock inbox [--follow]`: an agent's messages (read_messages), oldest first, marked read as
// they are shown unless --peek. --follow keeps waiting for new ones (50 s at a time) until Ctrl-C.
// A body is another agent's text: printed as data, indented under its header, never run.
import { defineCommand } from "citty";
import { defaultAgent } from "./claims.ts";
import { PORT_ARG } from "./client.ts";
import { tool } from "./wait.ts";

interface MessageView {
  id: number;
  from: string;
  to: string[];
  subject?: string;
  body: string;
  about?: string;
  thread_id: string;
  at: string;
  ack_required: boolean;
}

export function renderMessage(m: MessageView): string {
  const head = `#${m.id}  ${m.at}  ${m.from} → ${m.to.join(", ")}${m.about ? `  about ${m.about}` : ""}${m.subject ? `  “${m.subject}”` : ""}${m.ack_required ? "  (ack requested)" : ""}`;
  return [head, ...m.body.split("\n").map((l) => `    ${l}`)].join("\n");
}

export const inboxCommand = defineCommand({
  meta: { name: "inbox", description: "Show an agent's messages (unread ones by default), marking them read" },
  args: {
    agent: { type: "string", description: "Whose inbox (default cli:user@host)" },
    all: { type: "boolean", description: "Read messages too, not only unread ones" },
    peek: { type: "boolean", description: "Leave them unread" },
    follow: { type: "boolean", alias: "f", description: "Keep waiting for new messages until Ctrl-C" },
    json: { type: "boolean", description: "One JSON object per message" },
    port: PORT_ARG,
  },
  async run({ args }) {
    let since = 0;
    let shown = 0;
    for (;;) {
      const r = await tool<{ messages: MessageView[]; unread: number }>(
        "read_messages",
        { agent_id: args.agent ?? defaultAgent(), unread_only: !args.all, since_id: since, wait_seconds: args.follow ? 50 : 0, limit: 500, peek: args.peek === true },
        { port: args.port },
      );
      for (const m of r.messages) console.log(args.json ? JSON.stringify(m) : renderMessage(m));
      shown += r.messages.length;
      since = r.messages.at(-1)?.id ?? since;
      if (!args.follow && r.messages.length < 500) {
        if (shown === 0 && !args.json) console.log("(no messages)");
        return;
      }
    }
  },
});
