-- A channel of each daemon's own (docs/cluster.md, "Who hears a NOTIFY"): a transaction that wrote
-- a grant to a daemon's waiter, or places of its, notifies that daemon alone, on
-- `airlock_to_<its id>`, so the daemons it does not concern are not woken. A daemon of an earlier
-- release hears only the channel everyone hears; its heartbeat leaves this false, and what
-- concerns it goes there, as before.
ALTER TABLE daemons ADD COLUMN hears_own BOOLEAN NOT NULL DEFAULT false;
