-- The waiter lines have one stored form (src/domain/lines.ts): `waiters`, which already held
-- every daemon's slot requests; `slot_requests` goes. grace_ends: when a detached place lapses
-- (ms, the database's clock), so a place whose daemon left keeps the grace it had.
ALTER TABLE waiters ADD COLUMN grace_ends BIGINT;

-- A request only slot_requests held (none should be) joins as a detached place of no daemon.
INSERT INTO waiters (token, queue, keys, agent_id, req, ord, since, attached, daemon, grace_ends)
SELECT token, 'slot', json_build_array(pool)::text, agent_id,
  json_build_object(
    'agentId', agent_id, 'weight', weight, 'reason', reason, 'ttlMs', ttl_ms,
    'binding', CASE
      WHEN pid IS NULL OR pgid IS NULL OR pid_start IS NULL THEN NULL
      WHEN strpos(pid_start, '@') = 0 THEN json_build_object('pid', pid, 'pgid', pgid, 'startTime', pid_start)
      ELSE json_build_object('pid', pid, 'pgid', pgid, 'startTime', split_part(pid_start, '@', 1), 'host', substr(pid_start, strpos(pid_start, '@') + 1))
    END,
    'state', state, 'offerExpiresAt', offer_expires_at)::text,
  seq, since, false, '', NULL
FROM slot_requests s
WHERE NOT EXISTS (SELECT 1 FROM waiters w WHERE w.token = s.token);

DROP TABLE slot_requests;
