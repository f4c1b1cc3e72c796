-- The hooks' delivery (src/domain/inbox.ts, docs/messages.md "Delivery into the model"):
-- held_at is when a stop of the recipient's session was held for this message (an ack_required
-- one, or one about a resource it holds), so a stop is held once per message, never again.
ALTER TABLE message_recipients ADD COLUMN held_at INTEGER;
