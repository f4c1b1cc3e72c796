-- Airlock schema v2: the machine-wide semaphore (pools, held slots, queued requests) and the
-- journal of changes. Times are integer milliseconds since the epoch.

-- One row per pool. version counts configurations (compare-and-set); the default pool
-- `heavy` is its own first configuration.
CREATE TABLE pools (
  name          TEXT PRIMARY KEY,
  capacity      INTEGER NOT NULL CHECK (capacity >= 1),
  offer_seconds INTEGER NOT NULL CHECK (offer_seconds >= 1),
  version       INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  updated_by    TEXT NOT NULL,
  reason        TEXT NOT NULL
) STRICT;
INSERT INTO pools (name, capacity, offer_seconds, version, updated_at, updated_by, reason)
  VALUES ('heavy', 1, 30, 1, 0, 'airlock', 'default: one heavy job at a time');

-- Held slots. A slot bound to a process group (pid, pgid, pid_start) has no expiry: it lives
-- exactly as long as the group does. fence is the journal revision of its grant. No secondary
-- indexes: a pool holds a handful of slots, and every index is one more page per grant.
CREATE TABLE slots (
  token       TEXT PRIMARY KEY,
  pool        TEXT NOT NULL REFERENCES pools(name),
  agent_id    TEXT NOT NULL,
  weight      INTEGER NOT NULL,
  reason      TEXT,
  fence       INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at  INTEGER,
  pid         INTEGER,
  pgid        INTEGER,
  pid_start   TEXT
) STRICT;

-- Queued requests (long-lived by design: an agent keeps coding while it waits), in line by seq.
-- token is the request's wake_token. state: queued, offered (capacity reserved for it until
-- offer_expires_at) or paused (it missed an offer; it rejoins at the tail when it calls again).
CREATE TABLE slot_requests (
  token            TEXT PRIMARY KEY,
  pool             TEXT NOT NULL REFERENCES pools(name),
  agent_id         TEXT NOT NULL,
  weight           INTEGER NOT NULL,
  reason           TEXT,
  ttl_ms           INTEGER NOT NULL,
  pid              INTEGER,
  pgid             INTEGER,
  pid_start        TEXT,
  state            TEXT NOT NULL CHECK (state IN ('queued', 'offered', 'paused')),
  offer_expires_at INTEGER,
  since            INTEGER NOT NULL,
  seq              INTEGER NOT NULL
) STRICT;

-- Every state change, with a global revision that only grows: the rowid, and trimming old
-- entries always keeps the newest, so max(rowid) + 1 never repeats one (AUTOINCREMENT would
-- cost a write to sqlite_sequence on every change). data holds the kind's own fields as JSON.
-- No secondary index: readers go forward from a revision.
CREATE TABLE journal (
  revision INTEGER PRIMARY KEY,
  at       INTEGER NOT NULL,
  kind     TEXT NOT NULL,
  resource TEXT NOT NULL,
  agent_id TEXT,
  reason   TEXT,
  data     TEXT
) STRICT;

