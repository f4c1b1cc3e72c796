-- Call tasks (the MCP tasks extension, src/domain/call-tasks.ts), as on SQLite (007): a
-- blocking tools/call that waits on in its daemon after its client got a handle, read and
-- cancelled by any daemon sharing the store. Times are ms on the database's clock.
CREATE TABLE call_tasks (
  task_id         TEXT PRIMARY KEY,
  tool            TEXT NOT NULL,
  args            TEXT NOT NULL,
  status          TEXT NOT NULL,
  result          TEXT,
  queue           TEXT,
  wake_token      TEXT,
  daemon          TEXT NOT NULL,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL,
  deadline        BIGINT NOT NULL,
  ttl_ms          BIGINT NOT NULL,
  poll_ms         BIGINT NOT NULL,
  expires_at      BIGINT,
  fetched         BOOLEAN NOT NULL
);
CREATE INDEX call_tasks_status ON call_tasks (status);
