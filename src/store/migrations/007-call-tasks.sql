-- Call tasks (the MCP tasks extension, src/domain/call-tasks.ts): a blocking tools/call that
-- waits on in the daemon after its client got a handle. tool and args are the call as asked
-- (args as JSON, wait_seconds included); deadline is when its wait ends (ms); queue and
-- wake_token name its place in line (the waiters row it resumes after a restart); status is
-- working, completed or cancelled; result the tools/call result as JSON once completed;
-- expires_at when a finished task is dropped (ms); fetched: a tasks/get has read its result
-- (an unfetched one hands back what it was granted when it expires); daemon: whose call it is.
CREATE TABLE call_tasks (
  task_id         TEXT PRIMARY KEY,
  tool            TEXT NOT NULL,
  args            TEXT NOT NULL,
  status          TEXT NOT NULL,
  result          TEXT,
  queue           TEXT,
  wake_token      TEXT,
  daemon          TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  deadline        INTEGER NOT NULL,
  ttl_ms          INTEGER NOT NULL,
  poll_ms         INTEGER NOT NULL,
  expires_at      INTEGER,
  fetched         INTEGER NOT NULL
) STRICT;
CREATE INDEX call_tasks_status ON call_tasks (status);
