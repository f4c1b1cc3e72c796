// Fencing numbers: every grant of a resource carries one, strictly increasing per resource
// and kept in the store, so a holder that lost its grant (expiry, death) can be told apart
// from the current one even across daemon restarts.
import { get, type Tx } from "../store/tx.ts";

export function* nextFence(resource: string): Tx<number> {
  const row = yield* get<{ fence: number }>(
    "INSERT INTO fences (resource, fence) VALUES (?, 1) ON CONFLICT(resource) DO UPDATE SET fence = fences.fence + 1 RETURNING fence",
    resource,
  );
  return row!.fence;
}
