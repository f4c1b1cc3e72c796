-- Several daemons on one database (src/domain/cluster.ts, docs/cluster.md).

-- Bumped by every transaction that writes: a daemon that finds another value than the one it
-- left catches up (reloads the lines, refreshes its caches) before it reads anything.
CREATE TABLE airlock_sync (
  id      INT PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
INSERT INTO airlock_sync (id, version) VALUES (1, 0);

-- Each daemon's heartbeat, in the database's milliseconds.
CREATE TABLE daemons (
  id         TEXT PRIMARY KEY,
  host       TEXT NOT NULL,
  pid        BIGINT NOT NULL,
  started_at BIGINT NOT NULL,
  seen_at    BIGINT NOT NULL
);

-- Every daemon's waiters, in one arrival order (ord). attached: its call is blocked right now,
-- on its daemon. req is the primitive's request as JSON.
CREATE TABLE waiters (
  token    TEXT PRIMARY KEY,
  queue    TEXT NOT NULL,
  keys     TEXT NOT NULL,
  agent_id TEXT,
  req      TEXT NOT NULL,
  ord      BIGINT NOT NULL,
  since    BIGINT NOT NULL,
  attached BOOLEAN NOT NULL,
  daemon   TEXT NOT NULL
);

-- A grant to another daemon's blocked call, until that daemon answers it (or hands it back).
-- waiter is the waiter's row as it stood, for a hand-back after its daemon died.
CREATE TABLE grants (
  token  TEXT PRIMARY KEY,
  daemon TEXT NOT NULL,
  queue  TEXT NOT NULL,
  waiter TEXT NOT NULL,
  value  TEXT NOT NULL
);
CREATE INDEX grants_daemon ON grants (daemon);
