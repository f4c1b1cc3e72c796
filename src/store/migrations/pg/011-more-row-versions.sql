-- More tables carry row versions (migration 010 has the sequence, the table of deleted keys and
-- the two trigger functions; docs/cluster.md, "Catch-up by deltas"):
-- - the waiter lines: a catch-up reads only the places stamped above the version it applied,
--   and the tokens of the places that left;
-- - the tables whose rows arm expiry timers (locks, agents, tasks, slots): a catch-up re-arms
--   only the rows stamped above it. Row bodies write locks and agents too, and move no version;
--   their writes are stamped all the same, so the next catch-up that reads the table sees them.
--   A deleted row leaves no key here: the timer armed for it finds no row and does nothing.
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['waiters', 'locks', 'agents', 'tasks', 'slots'] LOOP
    EXECUTE format('ALTER TABLE %I ADD COLUMN ver BIGINT NOT NULL DEFAULT 0', t);
    EXECUTE format('CREATE INDEX %I ON %I(ver)', t || '_ver', t);
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION airlock_stamp()', t || '_stamp', t);
  END LOOP;
END
$$;
CREATE TRIGGER waiters_bury AFTER DELETE ON waiters FOR EACH ROW EXECUTE FUNCTION airlock_bury('token');
