// The pools' constants and shapes: rows, requests, grants, refusals and views, shared by the
// core (pools.ts), the offer policy, the process binding and the views.
import { hostname } from "node:os";
import type { ProcessBinding } from "../../machine/process.ts";
import type { Deadlock } from "../deadlock.ts";
import type { Waiter } from "../waiter.ts";

export const DEFAULT_POOL = "heavy";
export const DEFAULT_SLOT_TTL_MS = 900_000; // like a lock: long enough for a build, renew for longer

/** This machine's own budget, beside the store's `heavy` (the team's, on a shared store). */
export function machinePoolName(): string {
  return `machine:${hostname()}/${DEFAULT_POOL}`;
}
export const DEFAULT_OFFER_SECONDS = 30;
/** A shared store: a machine with no live daemon for this long has its bound slots released. */
export const HOST_GONE_MS = 10 * 60_000;
// A queued request is long-lived (the agent codes while it waits); one whose agent has not
// called for an hour is taken to be abandoned. Each call, and each offer, renews it.
export const POOL_WAKE_GRACE_MS = 3600 * 1000;
// The spec asks for release within 1 s of the last exit; a quarter of that leaves room for a
// busy event loop, and reading /proc for a handful of groups four times a second costs nothing.
export const PROCESS_WATCH_MS = 250;

export type RequestState = "queued" | "offered" | "paused";

export interface SlotWait {
  agentId: string;
  weight: number;
  reason: string | null;
  ttlMs: number;
  binding: ProcessBinding | null;
  state: RequestState;
  offerExpiresAt: number | null;
}
export type SlotWaiter = Waiter<SlotWait, SlotGrant>;
/** What a request asks for, whatever its state in line. */
export type Want = Omit<SlotWait, "state" | "offerExpiresAt">;

export interface PoolRow {
  name: string;
  capacity: number;
  offer_seconds: number;
  version: number;
  updated_at: number;
  updated_by: string;
  reason: string;
}

export interface SlotRow {
  token: string;
  pool: string;
  agent_id: string;
  weight: number;
  reason: string | null;
  fence: number;
  acquired_at: number;
  expires_at: number | null;
  pid: number | null;
  pgid: number | null;
  pid_start: string | null;
}

export interface SlotGrant {
  granted: true;
  token: string;
  pool: string;
  weight: number;
  fence: number;
  /** null for a slot bound to a process group: it has no expiry. */
  expiresAt: number | null;
  pid?: number;
}

export interface Holder {
  agentId: string;
  reason: string | null;
  weight: number;
  heldSeconds: number;
  pid?: number;
}

export interface Queued {
  agentId: string;
  /** Its wake_token (never shown to others: status marks a call task's place by it). */
  token: string;
  reason: string | null;
  weight: number;
  waitingSeconds: number;
  state: RequestState;
  blocked: boolean;
  /** For an offered request: when the offer lapses (ms). */
  offerExpiresAt?: number;
}

export interface SlotRefusal {
  granted: false;
  pool: string;
  capacity: number;
  inUse: number;
  position: number;
  /** Absent only with a deadlock: the request left the line. */
  wakeToken?: string;
  holders: Holder[];
  ahead: Queued[];
  /** Waiting would have closed this cycle: answered at once, and the request was withdrawn. */
  deadlock?: Deadlock;
}

export type SlotResult = SlotGrant | SlotRefusal;

/**
 * One acquire_slot call. A call that resumes a queued request (by its wake_token, or by agent and
 * pool) keeps what the request queued with for whatever it leaves out: weight, reason, ttl, pid.
 * A new request takes the defaults (weight 1, DEFAULT_SLOT_TTL_MS, no reason, unbound).
 */
export interface SlotRequest {
  agentId: string;
  pool: string;
  reason?: string | undefined;
  /** Whole units >= 1. A resumed request must ask for the weight it queued with, or leave it out. */
  weight?: number | undefined;
  waitMs: number;
  wakeToken?: string | undefined;
  ttlMs?: number | undefined;
  pid?: number | undefined;
}

export interface PoolView {
  pool: string;
  capacity: number;
  inUse: number;
  offered: number;
  queued: number;
  version: number;
  offerSeconds: number;
  holders: Holder[];
  waiters: Queued[];
}

export type ConfigureResult = { configured: true; version: number } | { configured: false; version: number; error: string };
export type SlotRenewResult = { renewed: true; expiresAt: number | null; pid?: number } | { renewed: false; error: string };

export interface ConfigureRequest {
  pool: string;
  capacity: number;
  expectedVersion: number;
  author: string;
  reason: string;
  offerSeconds?: number | undefined;
}
