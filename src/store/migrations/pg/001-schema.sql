-- Airlock schema on PostgreSQL, v1: the tables SQLite's migrations 001..005 leave, in one step
-- (a shared store starts at today's shape; it has no old files to carry forward). Same columns,
-- CHECKs and indexes; every integer is BIGINT because times are milliseconds since the epoch,
-- past int4, and the driver hands every one back as a JS number. Created in the connection's
-- current schema (its search_path), so a role can keep Airlock in a schema of its own.

-- A lock's row outlives its holder: a free lock keeps its row with no holder and the last
-- fence it handed out, so fences never repeat.
CREATE TABLE locks (
  name        TEXT PRIMARY KEY,
  agent_id    TEXT,
  token       TEXT,
  fence       BIGINT NOT NULL,
  acquired_at BIGINT,
  expires_at  BIGINT,
  CHECK ((agent_id IS NULL) = (token IS NULL) AND (agent_id IS NULL) = (expires_at IS NULL))
);
CREATE INDEX locks_agent ON locks(agent_id) WHERE agent_id IS NOT NULL;

-- The last fence handed out per resource (other than locks); kept after release so fences
-- never repeat.
CREATE TABLE fences (
  resource TEXT PRIMARY KEY,
  fence    BIGINT NOT NULL
);

CREATE TABLE notes (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  author     TEXT,
  updated_at BIGINT NOT NULL,
  expires_at BIGINT
);

CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL
);

CREATE TABLE agents (
  agent_id      TEXT PRIMARY KEY,
  registered_at BIGINT NOT NULL,
  expires_at    BIGINT NOT NULL,
  role          TEXT
);

CREATE TABLE events (
  name       TEXT PRIMARY KEY,
  generation BIGINT NOT NULL
);

-- A sequence never hands a number out twice, as SQLite's AUTOINCREMENT: a task id is not reused.
CREATE TABLE tasks (
  id               BIGSERIAL PRIMARY KEY,
  queue            TEXT NOT NULL,
  payload          TEXT NOT NULL,
  author           TEXT,
  priority         BIGINT NOT NULL DEFAULT 0,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'done', 'failed')),
  attempts         BIGINT NOT NULL DEFAULT 0,
  max_attempts     BIGINT,
  lease_agent      TEXT,
  lease_token      TEXT UNIQUE,
  lease_expires_at BIGINT,
  created_at       BIGINT NOT NULL,
  finished_at      BIGINT
);
CREATE INDEX tasks_pending ON tasks(queue, state, priority DESC, id);
CREATE INDEX tasks_lease_agent ON tasks(lease_agent) WHERE state = 'claimed';

-- One row per pool. version counts configurations (compare-and-set); the default pool
-- `heavy` is its own first configuration.
CREATE TABLE pools (
  name          TEXT PRIMARY KEY,
  capacity      BIGINT NOT NULL CHECK (capacity >= 1),
  offer_seconds BIGINT NOT NULL CHECK (offer_seconds >= 1),
  version       BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  updated_by    TEXT NOT NULL,
  reason        TEXT NOT NULL
);
INSERT INTO pools (name, capacity, offer_seconds, version, updated_at, updated_by, reason)
  VALUES ('heavy', 1, 30, 1, 0, 'airlock', 'default: one heavy job at a time');

-- Held slots. rowid stands in for SQLite's implicit one: the domain breaks ties between slots
-- granted in the same millisecond by insertion order (ORDER BY acquired_at, rowid).
CREATE TABLE slots (
  token       TEXT PRIMARY KEY,
  pool        TEXT NOT NULL REFERENCES pools(name),
  agent_id    TEXT NOT NULL,
  weight      BIGINT NOT NULL,
  reason      TEXT,
  fence       BIGINT NOT NULL,
  acquired_at BIGINT NOT NULL,
  expires_at  BIGINT,
  pid         BIGINT,
  pgid        BIGINT,
  pid_start   TEXT,
  rowid       BIGSERIAL NOT NULL
);

-- Queued requests, in line by seq. token is the request's wake_token.
CREATE TABLE slot_requests (
  token            TEXT PRIMARY KEY,
  pool             TEXT NOT NULL REFERENCES pools(name),
  agent_id         TEXT NOT NULL,
  weight           BIGINT NOT NULL,
  reason           TEXT,
  ttl_ms           BIGINT NOT NULL,
  pid              BIGINT,
  pgid             BIGINT,
  pid_start        TEXT,
  state            TEXT NOT NULL CHECK (state IN ('queued', 'offered', 'paused')),
  offer_expires_at BIGINT,
  since            BIGINT NOT NULL,
  seq              BIGINT NOT NULL
);

-- Every state change, with a global revision that only grows (from a sequence, so trimming
-- cannot bring one back). data holds the kind's own fields as JSON text.
CREATE TABLE journal (
  revision BIGSERIAL PRIMARY KEY,
  at       BIGINT NOT NULL,
  kind     TEXT NOT NULL,
  resource TEXT NOT NULL,
  agent_id TEXT,
  reason   TEXT,
  data     TEXT
);

-- Path claims: one row per claim_paths call; paths is a JSON array of the normalized patterns.
CREATE TABLE path_claims (
  token       TEXT PRIMARY KEY,
  room        TEXT NOT NULL,
  agent_id    TEXT NOT NULL,
  paths       TEXT NOT NULL,
  reason      TEXT,
  fence       BIGINT NOT NULL,
  acquired_at BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL
);
CREATE INDEX path_claims_room ON path_claims(room);
CREATE INDEX path_claims_agent ON path_claims(agent_id);

-- Dashboard sessions: only the SHA-256 of the cookie's value is stored.
CREATE TABLE ui_sessions (
  id_hash    TEXT PRIMARY KEY,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
