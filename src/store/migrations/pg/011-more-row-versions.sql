-- More tables carry row versions (migration 010 has the sequence, the table of deleted keys and
-- the two trigger functions; docs/cluster.md, "Catch-up by deltas"):
-- - the waiter lines: a catch-up reads only the places stamped above the version it applied,
--   and the tokens of the places that left;
-- - the tables whose rows arm expiry timers (locks, agents, tasks, slots): a catch-up re-arms
--   only the rows stamped above it. Row bodies write locks and agents too, and move no version;
--   their writes are stamped all the same, so the next catch-up that reads the table sees them.
--   A deleted row leaves no key here: the timer armed for it finds no row and does nothing.
ALTER TABLE waiters ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX waiters_ver ON waiters(ver);
CREATE TRIGGER waiters_stamp BEFORE INSERT OR UPDATE ON waiters FOR EACH ROW EXECUTE FUNCTION airlock_stamp();
CREATE TRIGGER waiters_bury AFTER DELETE ON waiters FOR EACH ROW EXECUTE FUNCTION airlock_bury('token');

ALTER TABLE locks ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX locks_ver ON locks(ver);
CREATE TRIGGER locks_stamp BEFORE INSERT OR UPDATE ON locks FOR EACH ROW EXECUTE FUNCTION airlock_stamp();

ALTER TABLE agents ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX agents_ver ON agents(ver);
CREATE TRIGGER agents_stamp BEFORE INSERT OR UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION airlock_stamp();

ALTER TABLE tasks ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX tasks_ver ON tasks(ver);
CREATE TRIGGER tasks_stamp BEFORE INSERT OR UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION airlock_stamp();

ALTER TABLE slots ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX slots_ver ON slots(ver);
CREATE TRIGGER slots_stamp BEFORE INSERT OR UPDATE ON slots FOR EACH ROW EXECUTE FUNCTION airlock_stamp();
