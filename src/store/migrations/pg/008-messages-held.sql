-- As on SQLite (../009-messages-held.sql): when a stop was held for this message.
ALTER TABLE message_recipients ADD COLUMN held_at BIGINT;
