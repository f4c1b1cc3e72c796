-- Messages between agents (src/domain/messages.ts, docs/messages.md). One row per message, one
-- row per (recipient, message) for its state in that agent's inbox. Times are ms; NULL: not yet.
-- thread: NULL when the message starts its own thread (its thread_id is then its id).
-- recipients: the JSON array every reader is shown as `to`. about: the resource it was sent
-- about (`lock:NAME`, `pool:NAME`, `path:ROOM:PATH`, `task:ID`), as resolved.
-- delivered_at is for the hooks (part 2): when the message was shown to the recipient's model.
-- 007 is left free for a table of another branch; the migrations run in list order (migrate.ts).
CREATE TABLE messages (
  id           INTEGER PRIMARY KEY,
  from_agent   TEXT NOT NULL,
  recipients   TEXT NOT NULL,
  subject      TEXT,
  body         TEXT NOT NULL,
  about        TEXT,
  thread       TEXT,
  ack_required INTEGER NOT NULL,
  sent_at      INTEGER NOT NULL
) STRICT;

-- The inbox: unread first by (agent_id, read_at IS NULL), then by id. The primary key is the
-- inbox in order; the partial index answers "unread for X" (and "undelivered for X") without
-- reading what X has read.
CREATE TABLE message_recipients (
  agent_id     TEXT NOT NULL,
  message_id   INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  read_at      INTEGER,
  acked_at     INTEGER,
  delivered_at INTEGER,
  PRIMARY KEY (agent_id, message_id)
) STRICT;
CREATE INDEX message_recipients_unread ON message_recipients(agent_id, message_id) WHERE read_at IS NULL;
CREATE INDEX message_recipients_message ON message_recipients(message_id);
CREATE INDEX message_recipients_read ON message_recipients(read_at) WHERE read_at IS NOT NULL;
