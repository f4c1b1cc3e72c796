// What a path claim call asks of Paths (paths.ts) and what it answers: a claim's request and its
// grant or refusal, a renewal's answer, a lead's forced release.
import type { Deadlock } from "./deadlock.ts";
import type { Conflict } from "./path-index.ts";

export interface ClaimRequest {
  agentId: string;
  paths: readonly string[];
  room?: string | undefined;
  ttlMs: number;
  waitMs?: number | undefined;
  wakeToken?: string | undefined;
  reason?: string | undefined;
}

export interface ClaimGranted {
  granted: true;
  token: string;
  room: string;
  paths: string[];
  fence: number;
  expiresAt: number;
}

export interface ClaimRefused {
  granted: false;
  conflicts: Conflict[];
  /** Present when the caller holds a place in the room's line. */
  wake?: { token: string; position: number };
  /** Waiting would have closed this cycle: answered at once, and the caller holds no place. */
  deadlock?: Deadlock;
}

export type ClaimResult = ClaimGranted | ClaimRefused;

export type RenewResult = { renewed: true; expiresAt: number } | { renewed: false; error: string };

export interface ForceReleaseRequest {
  agentId: string;
  holder: string;
  room?: string | undefined;
  paths?: readonly string[] | undefined;
  reason: string;
}
