// A path claim's stored row (table path_claims) and the claim the index holds (path-index.ts).
import { FENCES_ABOVE } from "./fences.ts";
import { deltaReads, deltaSince } from "./mirror.ts";
import type { Claim } from "./path-index.ts";

export interface PathClaimRow {
  token: string;
  room: string;
  agent_id: string;
  /** JSON array of normalized patterns. */
  paths: string;
  reason: string | null;
  fence: number;
  acquired_at: number;
  expires_at: number;
}

export function toClaim(row: PathClaimRow): Claim {
  return {
    token: row.token,
    room: row.room,
    agentId: row.agent_id,
    paths: JSON.parse(row.paths) as string[],
    reason: row.reason,
    fence: row.fence,
    acquiredAt: row.acquired_at,
    expiresAt: row.expires_at,
  };
}

/** Everything a claim's row says, as one text: two claims of one token are the same when these are. */
export const claimText = (c: Claim) => JSON.stringify([c.room, c.agentId, c.paths, c.reason, c.fence, c.acquiredAt, c.expiresAt]);

/** A fence's row as FENCES_ABOVE reads it (`room:ROOM`, its last fence). */
export interface FenceRow {
  resource: string;
  fence: number;
}

/**
 * What a catch-up of the claims reads (mirror.ts): above a row version, the claims, the tokens
 * gone and the fences moved, in one round trip; `claimsAhead` is the same statements, which a
 * shared store's BEGIN sends ahead when another daemon wrote the claims (Primitive.reads).
 */
export const claimsSince = (since: number | null) => deltaSince<PathClaimRow, FenceRow>("path_claims", since, undefined, FENCES_ABOVE);
export const claimsAhead = (since: number) => deltaReads("path_claims", since, undefined, FENCES_ABOVE);
