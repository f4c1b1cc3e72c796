-- Which tables each version's transaction changed (the newest thousand): a daemon catching up
-- from version v refreshes only what changed since v, instead of rereading every table.
CREATE TABLE airlock_changes (
  version BIGINT PRIMARY KEY,
  tables  TEXT NOT NULL
);
