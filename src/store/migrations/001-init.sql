-- Airlock schema v1. Times are integer milliseconds since the epoch.

CREATE TABLE locks (
  name        TEXT PRIMARY KEY,
  agent_id    TEXT NOT NULL,
  token       TEXT NOT NULL UNIQUE,
  fence       INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX locks_agent ON locks(agent_id);

-- The last fence handed out per resource; kept after release so fences never repeat.
CREATE TABLE fences (
  resource TEXT PRIMARY KEY,
  fence    INTEGER NOT NULL
) STRICT;

CREATE TABLE notes (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  author     TEXT,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER
) STRICT;

CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT;

CREATE TABLE agents (
  agent_id      TEXT PRIMARY KEY,
  registered_at INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  role          TEXT
) STRICT;

CREATE TABLE events (
  name       TEXT PRIMARY KEY,
  generation INTEGER NOT NULL
) STRICT;

CREATE TABLE tasks (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  queue            TEXT NOT NULL,
  payload          TEXT NOT NULL,
  author           TEXT,
  priority         INTEGER NOT NULL DEFAULT 0,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'done', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER,
  lease_agent      TEXT,
  lease_token      TEXT UNIQUE,
  lease_expires_at INTEGER,
  created_at       INTEGER NOT NULL,
  finished_at      INTEGER
) STRICT;
CREATE INDEX tasks_pending ON tasks(queue, state, priority DESC, id);
CREATE INDEX tasks_lease_agent ON tasks(lease_agent) WHERE state = 'claimed';
