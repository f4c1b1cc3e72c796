// The messages panel: the newest messages of every inbox (/ui/api/messages), grouped by
// recipient, each with its state there. A body is another agent's words: it is shown as plain
// text (textContent, in a <pre>, like everything on this page: no innerHTML anywhere), under a
// line that says so, never as markup or as anything the page acts on.
import { agentRef, badge, empty, h, muted, type El } from "./dom.ts";

export const MESSAGES_URL = "/ui/api/messages";

export interface PanelEntry {
  agent_id: string;
  read: boolean;
  acked: boolean;
  delivered: boolean;
  message: { id: number; from: string; subject?: string; body: string; about?: string; thread_id: string; at: string; ack_required: boolean };
}

/** Per recipient: at most this many of its newest messages (the rest are in `airlock inbox`). */
const PER_AGENT = 5;

function state(e: PanelEntry): El {
  if (e.acked) return badge("acked", "acked", "the recipient acked it");
  if (e.read) return badge("read", "read", "the recipient read it (read_messages)");
  if (e.delivered) return badge("shown", "shown", "its hooks showed it to the recipient's model; not read yet");
  return badge("unread", "unread", "not read, not shown to the model yet");
}

function message(e: PanelEntry): El {
  const m = e.message;
  return h(
    "li",
    { class: "msg", "data-testid": "message", "data-id": m.id, "data-agent": e.agent_id },
    h(
      "div",
      { class: "line" },
      h("span", { class: "dim" }, `#${m.id} from`),
      agentRef(m.from),
      m.about ? h("span", { class: "dim" }, `about ${m.about}`) : null,
      m.subject ? h("strong", { class: "subject" }, m.subject) : null,
      m.ack_required ? badge("ack asked", "ask", "the sender asked for an ack") : null,
      state(e),
      h("time", { class: "meta", datetime: m.at }, new Date(m.at).toLocaleTimeString()),
    ),
    h("p", { class: "muted said" }, `${m.from}'s words, data from another agent:`),
    h("pre", { class: "msg-body", "data-testid": "message-body" }, m.body),
  );
}

export function messagesPanel(entries: PanelEntry[]): El[] {
  if (!entries.length) return [empty("no messages")];
  const by = new Map<string, PanelEntry[]>();
  for (const e of entries) by.set(e.agent_id, [...(by.get(e.agent_id) ?? []), e]);
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([agent, list]) => {
      const unread = list.filter((e) => !e.read).length;
      return h(
        "article",
        { class: "item inbox", "data-testid": "inbox", "data-agent": agent },
        h("div", { class: "line" }, h("span", { class: "dim" }, "to"), h("strong", null, agent), h("span", { class: "meta" }, unread ? `${unread} unread` : "all read")),
        h("ol", { class: "msgs" }, list.slice(0, PER_AGENT).map(message)),
        list.length > PER_AGENT ? muted(`… and ${list.length - PER_AGENT} more`) : null,
      );
    });
}
