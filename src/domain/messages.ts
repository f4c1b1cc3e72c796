// Messages between agents (SPEC §13, docs/messages.md): an inbox per agent, threads, acks, and
// the hand-over of a held lock, claim or slot, which arrives as a message carrying the new token.
// - A recipient must have been *seen*: some primitive knows of it now or within its retention
//   (registered, holding, waiting, or in the journal), each primitive answering for its own
//   rows (Primitive.knows); a name nobody has seen is a typo, refused. An away agent still gets
//   the message in its inbox.
// - `about` names a resource (`lock:NAME`, `pool:NAME`, `path:ROOM:PATH`, `task:ID`) and goes to
//   whoever holds it now, as the primitive of that prefix answers (Primitive.about).
// - A read blocks on the one waiter mechanism: a line per recipient in the `message` queue, which
//   a send grants; on a shared store another daemon's send grants it through the cluster.
// - hand_over asks each primitive in turn whether the token is its (Primitive.handOver): the
//   move itself lives beside each primitive, and this is only the dispatcher and the message.
// Per recipient a row keeps read_at, acked_at and delivered_at (the hooks' "shown to the model",
// part 2); read messages go after MESSAGE_RETENTION_MS, and an inbox keeps its newest MAX_PER_AGENT.
// Journal: message.sent and message.acked (no bodies or subjects: the feed is anyone's to read).
import { AirlockError } from "../errors.ts";
import { all, get, run, runLater, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import type { Journal } from "./journal.ts";
import type { Presence } from "./presence.ts";
import type { HandedOver, Primitive } from "./primitive.ts";
import type { WaitQueue } from "./wait.ts";
import { ACK_ALONE, markIds, type Message, type MessageRow, registeredSend, type SendRequest, type Sent, toMessage } from "./message-rows.ts";
import { Delivery } from "./delivery.ts";

export type { Message, SendRequest, Sent };
import type { Outcome } from "./waiter.ts";

// SPEC §13's limits: a message is a note between agents, not a file or a log.
export const MAX_BODY_BYTES = 16 * 1024;
export const MAX_SUBJECT_CHARS = 200;
export const MAX_RECIPIENTS = 50;
// A read message stays a week (a thread can be looked up again), as the journal's history does.
export const MESSAGE_RETENTION_MS = 7 * 24 * 3600 * 1000;
// An inbox nobody reads must not grow without bound: the newest 10,000 stay, read or not.
export const MAX_PER_AGENT = 10_000;
export const DEFAULT_READ_LIMIT = 50;
// A hand-over's note is part of the message's body, beside the token and what moved.
export const MAX_NOTE_BYTES = 8 * 1024;
// Once an hour keeps the tables within an hour of the age limit; between, every this many sends
// the inboxes' sizes are checked too (a burst of sends to one agent).
const TRIM_EVERY_MS = 3600 * 1000;
const COUNT_CHECK_EVERY = 256;

export interface ReadRequest {
  agentId: string;
  unreadOnly: boolean;
  sinceId: number;
  waitMs: number;
  limit: number;
  peek: boolean;
}

export interface ReadResult {
  messages: Message[];
  /** The agent's unread messages after this read. */
  unread: number;
}

/** One message in one recipient's inbox, with its state there. */
export interface InboxEntry {
  agentId: string;
  message: Message;
  read: boolean;
  acked: boolean;
  /** Shown to the recipient's model by its hooks. */
  delivered: boolean;
}

export interface HandOverResult {
  toAgent: string;
  token: string;
  fence: number;
  about: string;
  messageId: number;
}

export class Messages {
  /** Blocked read_messages calls, one line per recipient; no wake_token, a returned reader calls again. */
  readonly waits: WaitQueue<Record<string, never>, true>;
  /** The hooks' delivery into the model (delivery.ts): once each, a stop held once. */
  readonly delivery: Delivery;
  private sinceCountCheck = 0;

  constructor(
    private readonly c: Ctx,
    private readonly journal: Journal,
    private readonly presence: Presence,
    /** The kernel's list: who knows an agent, who holds an `about` resource, whose a token is. */
    private readonly primitives: () => readonly Primitive[],
  ) {
    this.waits = c.waitQueue("message", 0);
    this.delivery = new Delivery(c, primitives);
  }

  /** At start: the retention's timer. */
  *load(): Tx<void> {
    this.c.scheduler.at("messages:trim", this.c.clock.now() + TRIM_EVERY_MS, () => this.trimAndRearm());
  }

  async send(req: SendRequest): Promise<Sent> {
    checkMessage(req);
    // To named agents, on a shared store: a row body first (docs/cluster.md, "Scaling out"). It
    // only inserts, so it runs when every recipient is seen without a doubt and nobody waits on
    // any of their inboxes (the stored lines say so for every daemon): to registered agents as
    // one statement that holds both conditions (insertRegistered), else reading them first.
    // Anything else (an `about` to resolve, a reader to wake, a name memory may not know yet, a
    // count check due) is the line body's, which decides as it always did, refusals included.
    const self = this;
    const to = [...new Set(req.to ?? [])];
    const rows = req.about === undefined && this.c.rowsOverlap && this.sinceCountCheck + 1 < COUNT_CHECK_EVERY;
    const registered = rows && this.waits.nobodyStored && to.every((n) => this.waits.line(n).length === 0) ? await this.c.rowTx("messages", req.from, () => this.insertRegistered(req, to)) : null;
    const sent =
      registered ??
      (rows
        ? await this.c.rowTx("messages", req.from, function* (): Tx<Sent | null> {
            if (!(yield* self.aloneFor(to))) return null;
            for (const name of to) if (!(yield* self.seen(name))) return null;
            return yield* self.insertAlone(req, to);
          })
        : null);
    return sent ?? this.c.tx(() => this.sendTx(req));
  }

  /**
   * A send to registered agents nobody waits on, as a row body of one statement, its last
   * (registeredSend), so a batch of them commits in its flight: null when a recipient is not a
   * registered agent or a place stands in its inbox's line (the row bodies after it decide).
   */
  private *insertRegistered(req: SendRequest, to: readonly string[]): Tx<Sent | null> {
    const s = registeredSend(req, to, to.flatMap((n) => [this.presence.known(n), this.waits.nobodyStored!(n)]), this.c.clock.now());
    const row = yield* this.journal.lastRecorded<{ id: number }>("message.sent", "", s.entry, { agentId: req.from }, s.sql, ...s.args);
    if (!row) return null;
    this.c.store.afterCommit(() => this.sinceCountCheck++);
    return { id: row.id, to: [...to], threadId: req.threadId ?? String(row.id) };
  }

  async read(req: ReadRequest, signal?: AbortSignal): Promise<ReadResult> {
    const deadline = this.c.clock.now() + req.waitMs;
    const self = this;
    for (;;) {
      // On a shared store, a read that does not block is a row body (docs/cluster.md, "Scaling
      // out"): it reads and marks only this inbox's rows, each mark conditional, so a read of
      // the same inbox on another daemon at the same moment never takes the same unread
      // message. One that would block (nothing there, time left) is the line body's, which
      // looks again before it takes its place in line.
      const quick = this.c.rowsOverlap ? await this.c.rowTx("message_recipients", req.agentId, () => self.readNow(req, deadline)) : null;
      if (quick) return quick;
      const first = await this.c.tx(function* (): Tx<{ done: ReadResult } | { blocked: Promise<Outcome<true>> }> {
        const messages = yield* self.fetch(req);
        if (messages.length > 0 || self.c.clock.now() >= deadline) return { done: yield* self.finishRead(req, messages) };
        return { blocked: self.waits.block(self.waits.enqueue(req.agentId, {}), deadline, signal) };
      });
      if ("done" in first) return first.done;
      // Woken by a send (another call of this agent may have read it first: then wait on), or not.
      if ((await first.blocked).kind !== "granted") return this.read({ ...req, waitMs: 0 });
    }
  }

  async ack(agentId: string, messageId: number, reply?: string): Promise<{ acked: true; replyId?: number }> {
    if (reply !== undefined) checkBody("reply", reply);
    // On a shared store a row body first (docs/cluster.md, "Scaling out"): it marks one row of
    // this inbox, and a reply only inserts. Anything else (a reply whose recipient waits to read
    // it, a count check due, a message not there to refuse) is the line body's, which decides as
    // it always did.
    const alone = () => (reply === undefined ? this.ackAlone(agentId, messageId) : this.ackTx(agentId, messageId, reply, true));
    const quick = this.c.rowsOverlap ? await this.c.rowTx("message_recipients", agentId, alone) : null;
    return quick ?? (await this.c.tx(() => this.ackTx(agentId, messageId, reply, false)))!;
  }

  /**
   * An ack with no reply, as a row body: the mark and its entry (its thread from the row) in one
   * statement, the body's last, so a batch of them commits in the flight that carries it
   * (docs/cluster.md, "A row batch in one flight"). Null when the message is not in the inbox:
   * the line body refuses it.
   */
  private *ackAlone(agentId: string, messageId: number): Tx<{ acked: true } | null> {
    const now = this.c.clock.now();
    // The same entry as ackTx's: {"id":N}, on the message's thread.
    const entry = { data: "?", args: [JSON.stringify({ id: messageId })], resource: "thread" };
    const row = yield* this.journal.lastRecorded("message.acked", "", entry, { agentId }, ACK_ALONE, now, now, agentId, messageId);
    return row ? { acked: true } : null;
  }

  /**
   * Moves what `token` holds (a lock, a path claim, a slot) to a registered, live agent, with a new
   * token and a higher fence, and sends it a message from the previous holder carrying the token.
   */
  async handOver(token: string, toAgent: string, note?: string): Promise<HandOverResult> {
    if (note !== undefined && Buffer.byteLength(note) > MAX_NOTE_BYTES) {
      throw new AirlockError("invalid_argument", `note must be at most ${MAX_NOTE_BYTES} bytes (got ${Buffer.byteLength(note)})`);
    }
    const self = this;
    return this.c.tx(function* (): Tx<HandOverResult> {
      if (!(yield* self.presence.find(toAgent))) {
        throw new AirlockError("invalid_argument", `to_agent: ${JSON.stringify(toAgent)} is not a live agent (it must be registered with register_agent and keep its heartbeat); nothing was handed over`);
      }
      let moved: HandedOver | null = null;
      for (const p of self.primitives()) {
        if (p.handOver) moved = yield* p.handOver(token, toAgent);
        if (moved) break;
      }
      if (!moved) {
        throw new AirlockError("invalid_argument", "token: no lock, path claim or slot is held with this token (released, expired, handed over already, or never issued); nothing was handed over");
      }
      const body =
        `${moved.from} handed ${moved.about} over to you (fence ${moved.fence}). Your token for it: ${moved.token} ` +
        `(use it to renew or release; the previous holder's token no longer works).${note ? `\nNote from ${moved.from}: ${note}` : ""}`;
      const sent = yield* self.deliver({ from: moved.from, to: [toAgent], about: moved.about, body, subject: `hand-over: ${moved.about}`.slice(0, MAX_SUBJECT_CHARS) }, [toAgent]);
      return { toAgent, token: moved.token, fence: moved.fence, about: moved.about, messageId: sent.id };
    });
  }

  /**
   * What the hooks will show a model (part 2): the agent's unread messages not yet delivered,
   * oldest first. markDelivered records that they were shown; reading them stays read_messages'.
   */
  async undelivered(agentId: string, limit = DEFAULT_READ_LIMIT): Promise<Message[]> {
    const rows = await this.c.rowRead("message_recipients", agentId, () =>
      all<MessageRow>(
        "SELECT m.* FROM message_recipients r JOIN messages m ON m.id = r.message_id WHERE r.agent_id = ? AND r.read_at IS NULL AND r.delivered_at IS NULL ORDER BY r.message_id LIMIT ?",
        agentId,
        limit,
      ),
    );
    return rows.map(toMessage);
  }

  async markDelivered(agentId: string, upToId: number): Promise<number> {
    const self = this;
    return this.c.tx(function* () {
      const r = yield* run(
        "UPDATE message_recipients SET delivered_at = ? WHERE agent_id = ? AND message_id <= ? AND read_at IS NULL AND delivered_at IS NULL",
        self.c.clock.now(),
        agentId,
        upToId,
      );
      return r.changes;
    });
  }

  /**
   * Marks these messages of the agent's inbox unread again (not acked ones): a read whose answer
   * never reached the agent (a call task's result left unfetched) hands its messages back.
   */
  async markUnread(agentId: string, ids: readonly number[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.c.tx(function* () {
      let n = 0;
      for (const id of ids) {
        n += (yield* run("UPDATE message_recipients SET read_at = NULL WHERE agent_id = ? AND message_id = ? AND acked_at IS NULL", agentId, id)).changes;
      }
      return n;
    });
  }

  /**
   * The newest messages of every inbox, one entry per (recipient, message), newest first, with
   * each recipient's state: what the dashboard's messages panel shows.
   */
  async recent(limit: number): Promise<InboxEntry[]> {
    // The dashboard asks at every refresh: rows only, read beside other daemons' row bodies.
    const rows = await this.c.rowRead("message_recipients", "", () =>
      all<MessageRow & { agent_id: string; read_at: number | null; acked_at: number | null; delivered_at: number | null }>(
        "SELECT m.*, r.agent_id, r.read_at, r.acked_at, r.delivered_at FROM message_recipients r JOIN messages m ON m.id = r.message_id ORDER BY r.message_id DESC, r.agent_id LIMIT ?",
        limit,
      ),
    );
    return rows.map((r) => ({ agentId: r.agent_id, message: toMessage(r), read: r.read_at !== null, acked: r.acked_at !== null, delivered: r.delivered_at !== null }));
  }

  /** Whether this agent ever had a message (it is seen as long as its inbox keeps one). */
  *knows(agentId: string): Tx<boolean> {
    return (yield* get("SELECT 1 AS x FROM message_recipients WHERE agent_id = ? LIMIT 1", agentId)) !== null;
  }

  /** Trims by age and by inbox size; the hourly timer runs it (tests call it directly). */
  async trim(): Promise<void> {
    await this.c.tx(() => this.trimTx());
  }

  // ---- internals -------------------------------------------------------------------------

  private *sendTx(req: SendRequest): Tx<Sent> {
    const to = req.about !== undefined ? yield* this.holdersOf(req.about, req.from) : [...new Set(req.to ?? [])];
    if (req.about === undefined) {
      for (const name of to) {
        if (!(yield* this.seen(name))) {
          throw new AirlockError(
            "invalid_argument",
            `to: unknown agent ${JSON.stringify(name)}: this daemon has not seen it (registered, holding, waiting or in the journal within ${MESSAGE_RETENTION_MS / 86_400_000} days); check the name. Nothing was sent`,
          );
        }
      }
    }
    return yield* this.deliver(req, to);
  }

  /** The message stored for each recipient, journalled, and every blocked read of theirs woken. */
  private *deliver(req: SendRequest, to: readonly string[]): Tx<Sent> {
    const sent = yield* this.insert(req, to);
    for (const name of to) for (const w of [...this.waits.line(name)]) this.waits.grant(w, true);
    if (++this.sinceCountCheck >= COUNT_CHECK_EVERY) {
      this.sinceCountCheck = 0;
      yield* this.trimTx();
    }
    return sent;
  }

  /**
   * Whether a row body may send to `to` by inserting alone: nobody waits on any of their inboxes
   * (the stored lines say so for every daemon), and the inboxes' count check is not due. Else
   * the line body's deliver, which wakes the readers and checks the counts.
   */
  private *aloneFor(to: readonly string[]): Tx<boolean> {
    if (this.sinceCountCheck + 1 >= COUNT_CHECK_EVERY) return false;
    for (const name of to) if (yield* this.waits.anyoneIn(name)) return false;
    return true;
  }

  /** A row body's send that aloneFor allowed: it counts towards the count check once it commits. */
  private *insertAlone(req: SendRequest, to: readonly string[]): Tx<Sent> {
    this.c.store.afterCommit(() => this.sinceCountCheck++);
    return yield* this.insert(req, to);
  }

  /** The message stored for each recipient, and journalled: all a send does when nobody waits to read. */
  private *insert(req: SendRequest, to: readonly string[]): Tx<Sent> {
    const now = this.c.clock.now();
    const row = (yield* get<{ id: number }>(
      "INSERT INTO messages (from_agent, recipients, subject, body, about, thread, ack_required, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      req.from,
      JSON.stringify(to),
      req.subject ?? null,
      req.body,
      req.about ?? null,
      req.threadId ?? null,
      req.ackRequired ? 1 : 0,
      now,
    ))!;
    for (const name of to) yield* runLater("INSERT INTO message_recipients (agent_id, message_id) VALUES (?, ?)", name, row.id);
    const threadId = req.threadId ?? String(row.id);
    yield* this.journal.record("message.sent", `thread:${threadId}`, {
      agentId: req.from,
      data: { id: row.id, to, ...(req.about ? { about: req.about } : {}), ...(req.ackRequired ? { ack_required: true } : {}) },
    });
    return { id: row.id, to: [...to], threadId };
  }

  /** Whoever holds `about` now, but the sender; nobody is an error. */
  private *holdersOf(about: string, from: string): Tx<string[]> {
    const i = about.indexOf(":");
    const prefix = i < 0 ? about : about.slice(0, i);
    const name = i < 0 ? "" : about.slice(i + 1);
    const owner = this.primitives().find((p) => p.about?.prefix === prefix);
    const known = this.primitives().flatMap((p) => (p.about ? [`${p.about.prefix}:`] : []));
    if (!owner?.about || name === "") throw new AirlockError("invalid_argument", `about must be one of ${known.join(", ")} followed by a name (got ${JSON.stringify(about)})`);
    const holders = [...new Set(yield* owner.about.holders(name))].filter((h) => h !== from);
    if (holders.length === 0) throw new AirlockError("invalid_argument", `about: nobody${from ? " else" : ""} holds ${about} now, so there is nobody to send to; name the agent with to instead. Nothing was sent`);
    return holders;
  }

  /** Seen: some primitive knows of this agent (presence, holders and waiters, then the journal). */
  private *seen(agentId: string): Tx<boolean> {
    for (const p of this.primitives()) if (p.knows && (yield* p.knows(agentId))) return true;
    return false;
  }

  /**
   * The ack, marking the message read too, and the reply if any. `alone` (a row body): null where
   * it needs the line body (the message is not there, to be refused; the reply's recipient waits
   * in line to read; the inboxes' count check is due).
   */
  private *ackTx(agentId: string, messageId: number, reply: string | undefined, alone: boolean): Tx<{ acked: true; replyId?: number } | null> {
    const m = yield* get<MessageRow>(
      "SELECT m.* FROM message_recipients r JOIN messages m ON m.id = r.message_id WHERE r.agent_id = ? AND r.message_id = ?",
      agentId,
      messageId,
    );
    if (!m && alone) return null;
    if (!m) throw new AirlockError("invalid_argument", `message_id: there is no message ${messageId} in ${agentId}'s inbox (read_messages lists them)`);
    if (alone && reply !== undefined && !(yield* this.aloneFor([m.from_agent]))) return null;
    const now = this.c.clock.now();
    yield* run(
      "UPDATE message_recipients SET acked_at = COALESCE(acked_at, ?), read_at = COALESCE(read_at, ?) WHERE agent_id = ? AND message_id = ?",
      now,
      now,
      agentId,
      messageId,
    );
    const threadId = m.thread ?? String(m.id);
    let replied: Sent | undefined;
    if (reply !== undefined) {
      const answer = { from: agentId, to: [m.from_agent], body: reply, subject: reSubject(m.subject), threadId };
      replied = alone ? yield* this.insertAlone(answer, [m.from_agent]) : yield* this.deliver(answer, [m.from_agent]);
    }
    yield* this.journal.record("message.acked", `thread:${threadId}`, { agentId, data: { id: messageId, ...(replied ? { reply: replied.id } : {}) } });
    return { acked: true as const, ...(replied ? { replyId: replied.id } : {}) };
  }

  /**
   * A read that does not block, as a row body: null when it would (nothing there and time left
   * before `deadline`), or when a read of the same inbox elsewhere marked every unread message
   * it fetched first (the line body then looks again).
   */
  private *readNow(req: ReadRequest, deadline: number): Tx<ReadResult | null> {
    const fetched = yield* this.fetch(req);
    if (fetched.length === 0 && this.c.clock.now() < deadline) return null;
    const read = yield* this.finishRead(req, fetched);
    return fetched.length > 0 && read.messages.length === 0 ? null : read;
  }

  private *fetch(req: ReadRequest): Tx<Message[]> {
    const rows = req.unreadOnly
      ? yield* all<MessageRow>(
          "SELECT m.* FROM message_recipients r JOIN messages m ON m.id = r.message_id WHERE r.agent_id = ? AND r.read_at IS NULL AND r.message_id > ? ORDER BY r.message_id LIMIT ?",
          req.agentId,
          req.sinceId,
          req.limit,
        )
      : yield* all<MessageRow>(
          "SELECT m.* FROM message_recipients r JOIN messages m ON m.id = r.message_id WHERE r.agent_id = ? AND r.message_id > ? ORDER BY r.message_id LIMIT ?",
          req.agentId,
          req.sinceId,
          req.limit,
        );
    return rows.map(toMessage);
  }

  /**
   * Marks what was fetched read (unless peek), each mark conditional, and counts what is left
   * unread. An unread-only read answers the messages its own mark took: beside row bodies, a
   * read of the same inbox on another daemon at the same moment marks (and answers) the others.
   */
  private *finishRead(req: ReadRequest, fetched: Message[]): Tx<ReadResult> {
    let messages = fetched;
    if (!req.peek && fetched.length > 0) {
      const mine = yield* markIds("read_at", req.agentId, this.c.clock.now(), fetched.map((m) => m.id));
      if (req.unreadOnly) messages = fetched.filter((m) => mine.has(m.id));
    }
    return { messages, unread: yield* this.unread(req.agentId) };
  }

  private *unread(agentId: string): Tx<number> {
    const n = yield* get<{ n: number }>("SELECT COUNT(*) AS n FROM message_recipients WHERE agent_id = ? AND read_at IS NULL", agentId);
    return Number(n?.n ?? 0);
  }

  private *trimTx(): Tx<void> {
    yield* run("DELETE FROM message_recipients WHERE read_at IS NOT NULL AND read_at < ?", this.c.clock.now() - MESSAGE_RETENTION_MS);
    const full = yield* all<{ agent_id: string }>("SELECT agent_id FROM message_recipients GROUP BY agent_id HAVING COUNT(*) > ?", MAX_PER_AGENT);
    for (const { agent_id } of full) {
      const edge = yield* get<{ message_id: number }>(
        "SELECT message_id FROM message_recipients WHERE agent_id = ? ORDER BY message_id DESC LIMIT 1 OFFSET ?",
        agent_id,
        MAX_PER_AGENT,
      );
      if (edge) yield* run("DELETE FROM message_recipients WHERE agent_id = ? AND message_id <= ?", agent_id, edge.message_id);
    }
    // The newest message always stays: on SQLite an id is a rowid, and max(rowid) + 1 must never
    // hand out an id again (a reader's since_id, a thread's id would point at another message).
    yield* run(
      "DELETE FROM messages WHERE id < (SELECT MAX(id) FROM messages) AND NOT EXISTS (SELECT 1 FROM message_recipients r WHERE r.message_id = messages.id)",
    );
  }

  private *trimAndRearm(): Tx<void> {
    yield* this.trimTx();
    yield* this.load();
  }
}

/** The limits of SPEC §13, checked before anything is read or written. */
export function checkMessage(req: SendRequest): void {
  const hasTo = req.to !== undefined && req.to.length > 0;
  if (hasTo === (req.about !== undefined)) throw new AirlockError("invalid_argument", "give either to (at least one agent) or about (a resource), not both and not neither");
  if (req.to && req.to.length > MAX_RECIPIENTS) throw new AirlockError("invalid_argument", `to must have at most ${MAX_RECIPIENTS} recipients (got ${req.to.length})`);
  checkBody("body", req.body);
  if (req.subject !== undefined && req.subject.length > MAX_SUBJECT_CHARS) {
    throw new AirlockError("invalid_argument", `subject must be at most ${MAX_SUBJECT_CHARS} characters (got ${req.subject.length})`);
  }
}

function checkBody(field: string, body: string): void {
  const bytes = Buffer.byteLength(body);
  if (bytes > MAX_BODY_BYTES) throw new AirlockError("invalid_argument", `${field} must be at most ${MAX_BODY_BYTES} bytes (16 KiB) of UTF-8 (got ${bytes})`);
}

function reSubject(subject: string | null): string | undefined {
  if (subject === null) return undefined;
  return (subject.startsWith("Re: ") ? subject : `Re: ${subject}`).slice(0, MAX_SUBJECT_CHARS);
}
