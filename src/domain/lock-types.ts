// What the lock calls take and answer (src/domain/locks.ts), and a lock's row and view.
import type { Deadlock } from "./deadlock.ts";

export interface LockRow {
  name: string;
  agent_id: string;
  token: string;
  fence: number;
  acquired_at: number;
  expires_at: number;
}

export interface Grant {
  locked: true;
  token: string;
  fence: number;
  expiresAt: number;
}

export interface Denied {
  locked: false;
  heldBy: string;
  expiresAt: number;
  /** Present when the caller holds a place in line. */
  wake?: { token: string; position: number };
  /** Waiting would have closed this cycle: answered at once, and the caller holds no place. */
  deadlock?: Deadlock;
}

export type AcquireResult = Grant | Denied;

export interface AcquireRequest {
  name: string;
  agentId: string;
  ttlMs: number;
  waitMs: number;
  wakeToken?: string | undefined;
}

export interface GroupRequest {
  names: string[];
  agentId: string;
  ttlMs: number;
  waitMs?: number | undefined;
  wakeToken?: string | undefined;
}

export type RenewResult = { renewed: true; expiresAt: number } | { renewed: false; error: string };

export interface MultiResult {
  locked: boolean;
  tokens?: Record<string, string>;
  fences?: Record<string, number>;
  expiresAt?: number;
  heldBy?: string;
  wake?: { token: string; position: number };
  deadlock?: Deadlock;
}

export interface LockView extends LockRow {
  waiters: { agentId: string; attached: boolean; waitingSeconds: number }[];
}
