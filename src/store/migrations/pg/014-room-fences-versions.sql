-- The fences carry row versions (migration 010 has the sequence and the stamping function;
-- docs/cluster.md, "Deltas read with the BEGIN"). Only rooms hand out fences from this table,
-- and a daemon keeps each room's last fence between grants (src/domain/fences.ts). When another
-- daemon granted in a room, the catch-up that reads the claims above the version it applied now
-- reads the fences above it too, in the same round trip, and keeps them; it used to forget every
-- fence and read the room's row again at its next grant, a round trip inside the exclusive order.
ALTER TABLE fences ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX fences_ver ON fences(ver);
CREATE TRIGGER fences_stamp BEFORE INSERT OR UPDATE ON fences FOR EACH ROW EXECUTE FUNCTION airlock_stamp();
