-- Airlock schema v3: path claims (advisory locks over globs). One row per claim_paths call:
-- paths is a JSON array of the normalized patterns it covers, all granted together. Times are
-- integer milliseconds since the epoch.
CREATE TABLE path_claims (
  token       TEXT PRIMARY KEY,
  room        TEXT NOT NULL,
  agent_id    TEXT NOT NULL,
  paths       TEXT NOT NULL,
  reason      TEXT,
  fence       INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX path_claims_room ON path_claims(room);
CREATE INDEX path_claims_agent ON path_claims(agent_id);
