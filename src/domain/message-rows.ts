// A message as stored (messages + message_recipients) and as the domain hands it on: the row
// shape and its conversion, shared by the inbox (messages.ts) and the hooks' delivery (delivery.ts);
// and the one-statement send and ack a shared store's row bodies run (messages.ts).
import { all, type Condition, type SQLQueryBindings, type Tx } from "../store/tx.ts";
import type { DataFromRow } from "./journal-entry.ts";

export interface SendRequest {
  from: string;
  /** Recipients by name; or `about` instead. */
  to?: readonly string[] | undefined;
  about?: string | undefined;
  body: string;
  subject?: string | undefined;
  threadId?: string | undefined;
  ackRequired?: boolean | undefined;
}

export interface Sent {
  id: number;
  to: string[];
  threadId: string;
}

/** An ack's mark, answering the entry's resource: the thread of the message (ackTx's `thread:` + its thread or id). */
export const ACK_ALONE =
  "UPDATE message_recipients SET acked_at = COALESCE(acked_at, ?), read_at = COALESCE(read_at, ?) WHERE agent_id = ? AND message_id = ? " +
  "RETURNING (SELECT 'thread:' || COALESCE(m.thread, CAST(m.id AS TEXT)) FROM messages m WHERE m.id = message_recipients.message_id) AS thread";

/**
 * A send to named agents as one statement (Messages.insertRegistered): the message stored only
 * if every condition holds (for each recipient: a registered agent, presence's `known`, so it
 * is seen without a doubt; and no stored place in its inbox's line); its recipients' rows and
 * its journal entry (insert's, the thread from the row) go with it.
 */
export function registeredSend(req: SendRequest, to: readonly string[], conditions: readonly Condition[], now: number): { sql: string; args: SQLQueryBindings[]; entry: DataFromRow } {
  const sql =
    "INSERT INTO messages (from_agent, recipients, subject, body, about, thread, ack_required, sent_at) " +
    `SELECT ?, ?, ?, ?, NULL, ?, CAST(? AS BIGINT), CAST(? AS BIGINT) WHERE ${conditions.map((c) => c.sql).join(" AND ")} RETURNING id, 'thread:' || COALESCE(thread, CAST(id AS TEXT)) AS thread_key`;
  const args = [req.from, JSON.stringify(to), req.subject ?? null, req.body, req.threadId ?? null, req.ackRequired ? 1 : 0, now, ...conditions.flatMap((c) => c.args)];
  // The same text as insert's entry: {"id":N,"to":[...]} (and "ack_required":true).
  const rest = `,"to":${JSON.stringify(to)}${req.ackRequired ? ',"ack_required":true' : ""}}`;
  const recipients = to.map((name) => ({ into: "message_recipients (agent_id, message_id)", select: "?, id", args: [name] }));
  return { sql, args, entry: { data: `'{"id":' || id || ?`, args: [rest], resource: "thread_key", with: recipients } };
}

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
