// A path claim's stored row (table path_claims) and the claim the index holds (path-index.ts).
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
