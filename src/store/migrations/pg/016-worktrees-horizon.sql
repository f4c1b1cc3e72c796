-- Working-tree reports that change something are row bodies (docs/cluster.md, "Working-tree
-- reports beside the order"): they write `worktrees` in the shared order, beside other daemons'
-- reads of it. A delta by row version (`ver > applied`) is not sound there: a report stamped
-- with a smaller version may commit after a larger one was read. So the rows and the keys of
-- deleted rows carry their writer's top-level transaction id (`wxid`, an xid8: no wraparound;
-- a savepoint's rows get the top-level id), and a delta reads `wxid >= horizon`, where the
-- horizon is the `xmin` of the snapshot that read the delta before: every transaction below it
-- had ended then, and a row that snapshot did not see belongs to one at or above it.
-- A report whose only change is its times (the hooks refresh it at every edit) keeps the id it
-- had: no mirror needs those current (memory's expiry is never later than the row's, and the
-- lapse timer reads the row: src/domain/worktrees.ts), so the other daemons' deltas do not
-- reread every refreshed report.
CREATE FUNCTION airlock_stamp_report() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.ver := nextval('airlock_row_ver');
  IF TG_OP = 'UPDATE' AND NEW.branch IS NOT DISTINCT FROM OLD.branch AND NEW.head IS NOT DISTINCT FROM OLD.head
     AND NEW.dirty = OLD.dirty AND NEW.touched = OLD.touched THEN
    NEW.wxid := OLD.wxid;
  ELSE
    NEW.wxid := pg_current_xact_id();
  END IF;
  RETURN NEW;
END
$$;

ALTER TABLE worktrees ADD COLUMN wxid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX worktrees_wxid ON worktrees(wxid);
DROP TRIGGER worktrees_stamp ON worktrees;
CREATE TRIGGER worktrees_stamp BEFORE INSERT OR UPDATE ON worktrees FOR EACH ROW EXECUTE FUNCTION airlock_stamp_report();

-- A deleted row's key carries its deleter's id too (the column's default, in the bury trigger).
ALTER TABLE airlock_gone ADD COLUMN wxid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX airlock_gone_wxid ON airlock_gone(tbl, wxid);
-- The newest id among the deleted keys trimmed so far: a delta from a horizon at or below it may
-- have lost a key, and reads its table whole instead.
ALTER TABLE airlock_sync ADD COLUMN gone_xfloor xid8 NOT NULL DEFAULT '0';
