-- A counter stays within the integers JSON carries exactly (±(2^53 - 1)): a value past them
-- would hand out duplicates. The domain checked the value it read back, after the write; the
-- schema refuses it now, so the write fails, and nothing runs after it (src/domain/counters.ts:
-- on PostgreSQL a batch of counters commits in the same flight as its writes, docs/cluster.md,
-- "A row batch in one flight"). SQLite adds a CHECK only by making the table again.
CREATE TABLE counters_exact (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL CONSTRAINT counters_exact CHECK (value BETWEEN -9007199254740991 AND 9007199254740991)
) STRICT;
INSERT INTO counters_exact (name, value) SELECT name, value FROM counters;
DROP TABLE counters;
ALTER TABLE counters_exact RENAME TO counters;
