-- Row versions, for a catch-up by deltas (docs/cluster.md, "Catch-up by deltas"): the tables
-- whose rows a daemon mirrors in an index (path claims, working trees) carry `ver`, stamped
-- from one sequence by a trigger at every insert and update, and each deleted row leaves its
-- key in `airlock_gone` with a version from the same sequence. A daemon that applied every
-- change up to version W reads only the rows and the keys above W. The triggers stamp every
-- write, whatever statement makes it, so no domain code can forget to.
CREATE SEQUENCE airlock_row_ver;

-- The keys of deleted rows (a JSON array of the key's columns), newest kept; airlock_sync's
-- gone_floor says up to which version they may have been trimmed.
CREATE TABLE airlock_gone (
  ver BIGINT PRIMARY KEY DEFAULT nextval('airlock_row_ver'),
  tbl TEXT NOT NULL,
  key TEXT NOT NULL
);
ALTER TABLE airlock_sync ADD COLUMN gone_floor BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION airlock_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.ver := nextval('airlock_row_ver');
  RETURN NEW;
END
$$;

-- TG_ARGV: the key's columns.
CREATE FUNCTION airlock_bury() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  k jsonb := '[]';
  c text;
BEGIN
  FOREACH c IN ARRAY TG_ARGV LOOP
    k := k || jsonb_build_array(to_jsonb(OLD) -> c);
  END LOOP;
  INSERT INTO airlock_gone (tbl, key) VALUES (TG_TABLE_NAME, k::text);
  RETURN NULL;
END
$$;

ALTER TABLE path_claims ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX path_claims_ver ON path_claims(ver);
CREATE TRIGGER path_claims_stamp BEFORE INSERT OR UPDATE ON path_claims FOR EACH ROW EXECUTE FUNCTION airlock_stamp();
CREATE TRIGGER path_claims_bury AFTER DELETE ON path_claims FOR EACH ROW EXECUTE FUNCTION airlock_bury('token');

ALTER TABLE worktrees ADD COLUMN ver BIGINT NOT NULL DEFAULT 0;
CREATE INDEX worktrees_ver ON worktrees(ver);
CREATE TRIGGER worktrees_stamp BEFORE INSERT OR UPDATE ON worktrees FOR EACH ROW EXECUTE FUNCTION airlock_stamp();
CREATE TRIGGER worktrees_bury AFTER DELETE ON worktrees FOR EACH ROW EXECUTE FUNCTION airlock_bury('agent_id', 'room');
