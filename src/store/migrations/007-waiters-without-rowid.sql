-- The waiter lines' table keyed by its token alone (WITHOUT ROWID): a place that joins or leaves
-- a line writes one b-tree page, not two (the table's and its primary key's index). A lock's
-- hand-off deletes its waiter's row in the transaction every waiter waits on (bench/README.md,
-- "Where the time goes"). The same columns, keys and rows as 006.
CREATE TABLE waiters_007 (
  token      TEXT PRIMARY KEY,
  queue      TEXT NOT NULL,
  keys       TEXT NOT NULL,
  agent_id   TEXT,
  req        TEXT NOT NULL,
  ord        INTEGER NOT NULL,
  since      INTEGER NOT NULL,
  attached   INTEGER NOT NULL,
  daemon     TEXT NOT NULL,
  grace_ends INTEGER
) STRICT, WITHOUT ROWID;

INSERT INTO waiters_007 (token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends)
SELECT token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends FROM waiters;

DROP TABLE waiters;
ALTER TABLE waiters_007 RENAME TO waiters;
