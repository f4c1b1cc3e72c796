-- When each machine last had a live daemon (its daemons' heartbeats; a row outlives them):
-- a slot bound to a process on a machine gone for long is released by the others, since no
-- daemon there is left to see the process end (src/domain/pools.ts).
CREATE TABLE hosts (
  host    TEXT PRIMARY KEY,
  seen_at BIGINT NOT NULL
);
