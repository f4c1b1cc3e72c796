-- Finished tasks by when they finished (src/domain/tasks.ts): the purge looks up the oldest
-- (MIN(finished_at)) and deletes those past the retention, which without this read every task,
-- pending ones included, and a week of finished ones is kept.
CREATE INDEX tasks_finished ON tasks(finished_at) WHERE finished_at IS NOT NULL;
