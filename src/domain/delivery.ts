// The hooks' delivery of an agent's inbox into its model (SPEC §13, docs/messages.md "Delivery
// into the model"): at each hook point of a session (session start, a tool boundary, a prompt, a
// stop) the hook asks for what its model has not been shown, and is given each unread message
// once. The fetch and the mark are one transaction, and each mark is conditional on the row not
// being marked yet (`UPDATE … WHERE delivered_at IS NULL … RETURNING`), so two hook processes of
// one session firing at once, on one daemon or two on a shared store, never both get a message.
// - Delivered is not read: the message stays unread (status, read_messages) until the agent reads
//   or acks it; the hooks only keep it from being shown twice.
// - A stop is held once per message that asks for the agent's attention: an ack_required one not
//   acked yet, or a release request (one `about` a resource the agent still holds, not read yet).
//   held_at marks it, so the next stop is not held for it again. A stop held anyway (a slot offer)
//   carries every undelivered message too; a stop with nothing to hold for shows nothing (the
//   messages wait for the next tool boundary or prompt, since a stop can speak only by holding).
import { all, last, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import { markIds, type Message, type MessageRow, toMessage } from "./message-rows.ts";
import type { Primitive } from "./primitive.ts";

/** Per hook point: a hook's text is read by the model in full, so a burst comes in parts. */
export const DELIVER_LIMIT = 10;

export type HookPoint = "session" | "tool" | "prompt" | "stop";

export interface Delivered {
  /** Shown now for the first time, oldest first. */
  messages: Message[];
  /** Stop only: the messages this stop is held for (some may have been shown at an earlier point). */
  holdFor: Message[];
  /** Undelivered messages left for the next hook point (beyond DELIVER_LIMIT). */
  more: number;
}

const NOTHING: Delivered = { messages: [], holdFor: [], more: 0 };
/** One message of the agent's not yet shown nor read, if any. */
const UNDELIVERED_ONE = "SELECT message_id FROM message_recipients WHERE agent_id = ? AND read_at IS NULL AND delivered_at IS NULL LIMIT 1";
/** An agent's unheld messages that may ask for its attention (attentionOf): ack_required and not acked, or about a resource and unread. */
const ATTENTION_ROWS =
  "FROM message_recipients r JOIN messages m ON m.id = r.message_id WHERE r.agent_id = ? AND r.held_at IS NULL " +
  "AND ((m.ack_required = 1 AND r.acked_at IS NULL) OR (m.about IS NOT NULL AND r.read_at IS NULL))";
/** One of them, if any: a stop with none is held for nothing. */
const ATTENTION_ONE = `SELECT r.message_id ${ATTENTION_ROWS} LIMIT 1`;

export class Delivery {
  constructor(
    private readonly c: Ctx,
    private readonly primitives: () => readonly Primitive[],
  ) {}

  /**
   * What `agentId`'s model is shown at this hook point, marked delivered (and held, at a stop) in
   * the same transaction. `held`: the stop is held anyway (the hook found a slot offer).
   */
  async take(agentId: string, point: HookPoint, held = false): Promise<Delivered> {
    const self = this;
    const body = function* (): Tx<Delivered> {
      const now = self.c.clock.now();
      let holdFor: Message[] = [];
      if (point === "stop") {
        const asks = yield* self.attentionOf(agentId);
        const marked = yield* markIds("held_at", agentId, now, asks.map((m) => m.id));
        holdFor = asks.filter((m) => marked.has(m.id));
        if (holdFor.length === 0 && !held) return NOTHING;
      }
      const ids = yield* all<{ message_id: number }>(
        "SELECT message_id FROM message_recipients WHERE agent_id = ? AND read_at IS NULL AND delivered_at IS NULL ORDER BY message_id LIMIT ?",
        agentId,
        DELIVER_LIMIT,
      );
      const shown = yield* markIds("delivered_at", agentId, now, ids.map((r) => Number(r.message_id)));
      const left = ids.length < DELIVER_LIMIT ? [] : yield* all<{ n: number }>("SELECT COUNT(*) AS n FROM message_recipients WHERE agent_id = ? AND read_at IS NULL AND delivered_at IS NULL", agentId);
      const more = Number(left[0]?.n ?? 0);
      const messages = shown.size ? (yield* rowsOf(agentId, [...shown])).map(toMessage) : [];
      return { messages, holdFor, more };
    };
    // Every tool boundary and every stop of every agent asks this, and most find nothing: a look
    // first, its body's last statement, so its batch commits in one flight (docs/cluster.md, "A
    // row batch in one flight"); nothing there is what the body would have found. (A stop held
    // anyway, for a slot offer, shows whatever is undelivered: no look.)
    const look = point !== "stop" ? UNDELIVERED_ONE : held ? null : ATTENTION_ONE;
    if (look && !(await this.c.rowRead("message_recipients", agentId, () => last([], look, agentId)))) return NOTHING;
    // The body reads and marks only the agent's own rows, each mark conditional: a row body, so
    // on a shared store it does not stop every daemon's row batches; but for a stop, which asks
    // the primitives who holds what, some from memory.
    return point === "stop" ? this.c.tx(body) : this.c.rowTx("message_recipients", agentId, body);
  }

  /** Unheld messages asking for attention: ack_required and not acked, or about a resource held now and unread. */
  private *attentionOf(agentId: string): Tx<Message[]> {
    const rows = yield* all<MessageRow>(`SELECT m.* ${ATTENTION_ROWS} ORDER BY r.message_id LIMIT ?`, agentId, DELIVER_LIMIT);
    const out: Message[] = [];
    for (const m of rows.map(toMessage)) {
      if (m.ackRequired || (yield* this.holds(agentId, m.about!))) out.push(m);
    }
    return out;
  }

  /** Whether the agent holds the `about` resource now, as its primitive answers. */
  private *holds(agentId: string, about: string): Tx<boolean> {
    const i = about.indexOf(":");
    const owner = i < 0 ? undefined : this.primitives().find((p) => p.about?.prefix === about.slice(0, i));
    if (!owner?.about) return false;
    return (yield* owner.about.holders(about.slice(i + 1))).includes(agentId);
  }
}

function* rowsOf(agentId: string, ids: readonly number[]): Tx<MessageRow[]> {
  const marks = ids.map(() => "?").join(", ");
  return yield* all<MessageRow>(
    `SELECT m.* FROM message_recipients r JOIN messages m ON m.id = r.message_id WHERE r.agent_id = ? AND r.message_id IN (${marks}) ORDER BY r.message_id`,
    agentId,
    ...ids,
  );
}
