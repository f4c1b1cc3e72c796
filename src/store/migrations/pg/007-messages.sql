-- Messages between agents, as on SQLite (../008-messages.sql, src/domain/messages.ts).
-- 006 is left free for a table of another branch; the migrations run in list order (pg/migrate.ts).
CREATE TABLE messages (
  id           BIGSERIAL PRIMARY KEY,
  from_agent   TEXT NOT NULL,
  recipients   TEXT NOT NULL,
  subject      TEXT,
  body         TEXT NOT NULL,
  about        TEXT,
  thread       TEXT,
  ack_required BIGINT NOT NULL,
  sent_at      BIGINT NOT NULL
);

CREATE TABLE message_recipients (
  agent_id     TEXT NOT NULL,
  message_id   BIGINT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  read_at      BIGINT,
  acked_at     BIGINT,
  delivered_at BIGINT,
  PRIMARY KEY (agent_id, message_id)
);
CREATE INDEX message_recipients_unread ON message_recipients(agent_id, message_id) WHERE read_at IS NULL;
CREATE INDEX message_recipients_message ON message_recipients(message_id);
CREATE INDEX message_recipients_read ON message_recipients(read_at) WHERE read_at IS NOT NULL;
