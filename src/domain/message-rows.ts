// A message as stored (messages + message_recipients) and as the domain hands it on: the row
// shape and its conversion, shared by the inbox (messages.ts) and the hooks' delivery (delivery.ts).
import { all, type Tx } from "../store/tx.ts";

export interface Message {
  id: number;
  from: string;
  to: string[];
  subject?: string;
  body: string;
  about?: string;
  threadId: string;
  /** When it was sent (ms). */
  at: number;
  ackRequired: boolean;
}

export interface MessageRow {
  id: number;
  from_agent: string;
  recipients: string;
  subject: string | null;
  body: string;
  about: string | null;
  thread: string | null;
  ack_required: number;
  sent_at: number;
}

export function toMessage(r: MessageRow): Message {
  const m: Message = { id: r.id, from: r.from_agent, to: JSON.parse(r.recipients) as string[], body: r.body, threadId: r.thread ?? String(r.id), at: r.sent_at, ackRequired: r.ack_required === 1 };
  if (r.subject !== null) m.subject = r.subject;
  if (r.about !== null) m.about = r.about;
  return m;
}

/**
 * Sets `column` on those of the agent's rows where it is still NULL; the ids this call marked (a
 * read or a delivery of the same inbox elsewhere at the same moment marks the others).
 */
export function* markIds(column: "delivered_at" | "held_at" | "read_at", agentId: string, now: number, ids: readonly number[]): Tx<Set<number>> {
  if (ids.length === 0) return new Set();
  const marks = ids.map(() => "?").join(", ");
  const rows = yield* all<{ message_id: number }>(
    `UPDATE message_recipients SET ${column} = ? WHERE agent_id = ? AND ${column} IS NULL AND message_id IN (${marks}) RETURNING message_id`,
    now,
    agentId,
    ...ids,
  );
  return new Set(rows.map((r) => Number(r.message_id)));
}
