-- Airlock schema v4: a lock's row outlives its holder. A free lock keeps its row with no
-- holder (agent_id, token, acquired_at and expires_at NULL) and the last fence it handed out,
-- so a hand-off rewrites one row in place instead of deleting it, bumping a separate fence
-- row and inserting it again: half the pages per commit on the path every waiter waits on.
-- Tokens are 128 random bits; they need no unique index.
CREATE TABLE locks_v4 (
  name        TEXT PRIMARY KEY,
  agent_id    TEXT,
  token       TEXT,
  fence       INTEGER NOT NULL,
  acquired_at INTEGER,
  expires_at  INTEGER,
  CHECK ((agent_id IS NULL) = (token IS NULL) AND (agent_id IS NULL) = (expires_at IS NULL))
) STRICT;
INSERT INTO locks_v4 (name, agent_id, token, fence, acquired_at, expires_at)
  SELECT name, agent_id, token, fence, acquired_at, expires_at FROM locks;
-- Locks that are free now keep their last fence, so fences never repeat.
INSERT INTO locks_v4 (name, fence)
  SELECT substr(resource, 6), fence FROM fences
  WHERE resource LIKE 'lock:%' AND substr(resource, 6) NOT IN (SELECT name FROM locks);
DELETE FROM fences WHERE resource LIKE 'lock:%';
DROP TABLE locks;
ALTER TABLE locks_v4 RENAME TO locks;
CREATE INDEX locks_agent ON locks(agent_id) WHERE agent_id IS NOT NULL;
