-- Dashboard sessions (issue 10): the cookie's value is never stored, only its SHA-256, so a
-- copy of the database does not log anyone in. Kept across restarts, so an open dashboard
-- stays logged in and its change feed resumes.
CREATE TABLE ui_sessions (
  id_hash TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
