-- The waiter lines carry row versions too (docs/cluster.md, "Catch-up by deltas"): a catch-up
-- reads only the places that changed since the version it applied, and the tokens of the places
-- that left, instead of every place of every line (migration 010 has the sequence, the table of
-- deleted keys and the two trigger functions).
ALTER TABLE waiters ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX waiters_ver ON waiters(ver);
CREATE TRIGGER waiters_stamp BEFORE INSERT OR UPDATE ON waiters FOR EACH ROW EXECUTE FUNCTION airlock_stamp();
CREATE TRIGGER waiters_bury AFTER DELETE ON waiters FOR EACH ROW EXECUTE FUNCTION airlock_bury('token');
