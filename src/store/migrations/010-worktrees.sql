-- Working trees (src/domain/worktrees.ts, docs/worktrees.md): what each agent's checkout holds
-- uncommitted, as its hooks report it (report_worktree). One row per (agent, room): a report
-- replaces `dirty` (a JSON array of repository-relative paths, at most 2,000) and adds to
-- `touched` (a JSON object, path -> ms it was first reported touched; a path leaves when it is
-- no longer dirty). branch/head: NULL when not reported. Times are ms; a row goes at expires_at
-- (no report for that long) or when the agent departs.
CREATE TABLE worktrees (
  agent_id    TEXT NOT NULL,
  room        TEXT NOT NULL,
  branch      TEXT,
  head        TEXT,
  dirty       TEXT NOT NULL,
  touched     TEXT NOT NULL,
  reported_at INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  PRIMARY KEY (agent_id, room)
) STRICT;
CREATE INDEX worktrees_room ON worktrees(room);
