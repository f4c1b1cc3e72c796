// Fencing numbers: every grant of a resource carries one, strictly increasing per resource
// and kept in the store, so a holder that lost its grant (expiry, death) can be told apart
// from the current one even across daemon restarts.
import type { Store } from "../store/db.ts";

export function nextFence(store: Store, resource: string): number {
  const row = store
    .q<{ fence: number }>(
      "INSERT INTO fences (resource, fence) VALUES (?, 1) ON CONFLICT(resource) DO UPDATE SET fence = fence + 1 RETURNING fence",
    )
    .get(resource);
  return row!.fence;
}
