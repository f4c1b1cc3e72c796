-- A counter stays within the integers JSON carries exactly (±(2^53 - 1)): a value past them
-- would hand out duplicates. The domain checked the value it read back, after the write; the
-- schema refuses it now, so the write fails, and nothing runs after it: a batch of counters
-- commits in the same flight as its writes (src/domain/counters.ts; docs/cluster.md, "A row
-- batch in one flight"). Every value already stored is within it (the domain kept them so).
ALTER TABLE counters ADD CONSTRAINT counters_exact CHECK (value BETWEEN -9007199254740991 AND 9007199254740991);
