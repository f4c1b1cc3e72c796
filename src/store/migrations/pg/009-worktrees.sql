-- Working trees, as on SQLite (../010-worktrees.sql, src/domain/worktrees.ts).
CREATE TABLE worktrees (
  agent_id    TEXT NOT NULL,
  room        TEXT NOT NULL,
  branch      TEXT,
  head        TEXT,
  dirty       TEXT NOT NULL,
  touched     TEXT NOT NULL,
  reported_at BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  PRIMARY KEY (agent_id, room)
);
CREATE INDEX worktrees_room ON worktrees(room);
