// Fencing numbers: every grant of a resource carries one, strictly increasing per resource
// and kept in the store, so a holder that lost its grant (expiry, death) can be told apart
// from the current one even across daemon restarts.
import { get, runLater, type Tx } from "../store/tx.ts";

export function* nextFence(resource: string): Tx<number> {
  const row = yield* get<{ fence: number }>(
    "INSERT INTO fences (resource, fence) VALUES (?, 1) ON CONFLICT(resource) DO UPDATE SET fence = fences.fence + 1 RETURNING fence",
    resource,
  );
  return row!.fence;
}

/**
 * The fences stamped above a row version (only rooms' use the table; a shared store stamps its
 * rows: migration 014), read beside the claims above the same version (Paths.refresh).
 */
export const FENCES_ABOVE = "SELECT resource, fence FROM fences WHERE ver > ?";

/**
 * The rooms' last fences, kept between grants so that a claim need not read its room's row
 * first (a round trip, on a networked store, inside the exclusive order). Only line bodies hand
 * out a room's fences (a claim, a hand-over: both through here), and on a shared store every
 * other daemon's grant makes this one refresh the claims before its next line body runs, which
 * reads the fences that moved since it last did (learn) or, reading the claims whole, forgets
 * them all: so a fence kept is never behind the row. One ahead of it (its transaction rolled
 * back) only leaves a gap, which fences may have.
 */
export class RoomFences {
  private readonly last = new Map<string, number>();

  constructor(private readonly inSharedOrder: () => boolean) {}

  *next(room: string): Tx<number> {
    const resource = `room:${room}`;
    const last = this.last.get(room);
    const shared = this.inSharedOrder(); // never for a grant; then only the row is trusted
    if (last === undefined || shared) {
      const fence = yield* nextFence(resource);
      if (!shared) this.last.set(room, fence);
      return fence;
    }
    const fence = last + 1;
    yield* runLater("INSERT INTO fences (resource, fence) VALUES (?, ?) ON CONFLICT(resource) DO UPDATE SET fence = excluded.fence", resource, fence);
    this.last.set(room, fence);
    return fence;
  }

  /**
   * The fences that moved since the rooms' claims were last read (FENCES_ABOVE); the others did
   * not. Undefined: not known, all forgotten (the next grant in each room reads its row).
   */
  learn(moved: readonly { resource: string; fence: number }[] | undefined): void {
    if (moved === undefined) this.last.clear();
    else for (const f of moved) if (f.resource.startsWith("room:")) this.last.set(f.resource.slice("room:".length), Number(f.fence));
  }
}
