-- The waiter lines' one stored form, as on PostgreSQL (src/domain/lines.ts): one row per place
-- in a line whose call can outlive it (locks, path claims, slot requests). queue is the wait
-- queue's name, keys its lines as a JSON array, req the primitive's request as JSON, ord the
-- arrival order every line shares. attached: its call blocked when the row was written (none
-- does after a restart); daemon: LOCAL_DAEMON; grace_ends: when a detached place lapses (ms).
-- Keyed by its token alone (WITHOUT ROWID): a place that joins or leaves a line writes one
-- b-tree page, not two (the table's and its primary key's index); a lock's hand-off deletes its
-- waiter's row in the transaction the waiter waits on (bench/README.md, "Where the time goes").
CREATE TABLE waiters (
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

-- Queued slot requests become the slot queue's places, their request as the pools write it
-- (a binding's stored start time carries its machine after an @). Their graces start at load.
INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends)
SELECT token, 'slot', json_array(pool), agent_id,
  json_object(
    'agentId', agent_id, 'weight', weight, 'reason', reason, 'ttlMs', ttl_ms,
    'binding', json(CASE
      WHEN pid IS NULL OR pgid IS NULL OR pid_start IS NULL THEN 'null'
      WHEN instr(pid_start, '@') = 0 THEN json_object('pid', pid, 'pgid', pgid, 'startTime', pid_start)
      ELSE json_object('pid', pid, 'pgid', pgid, 'startTime', substr(pid_start, 1, instr(pid_start, '@') - 1), 'host', substr(pid_start, instr(pid_start, '@') + 1))
    END),
    'state', state, 'offerExpiresAt', offer_expires_at),
  seq, since, 0, 'local', NULL
FROM slot_requests;

DROP TABLE slot_requests;
