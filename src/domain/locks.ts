// Named locks with fair, blocking waits.
//
// A lock that frees (release, TTL expiry, holder's death) is handed, in the same transaction,
// to the earliest *attached* waiter; detached waiters (their call returned) are passed over
// but keep their place under their wake_token. A new caller never barges past an attached
// waiter: whenever a lock is free no attached waiter exists, because freeing hands it off.
import { AirlockError } from "../errors.ts";
import { type Ctx, secondsSince } from "./context.ts";
import { nextFence } from "./fences.ts";
import { newToken } from "./tokens.ts";
import type { Waiter, WaitQueue } from "./wait.ts";

// A waiter whose call timed out re-polls straight away in the recipes; two minutes also covers
// an agent that thinks for a while between calls. Detached lock waiters are passed over, so
// holding their place longer costs nobody anything but memory.
export const LOCK_WAKE_GRACE_MS = 120_000;

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
}

export type AcquireResult = Grant | Denied;

export interface AcquireRequest {
  name: string;
  agentId: string;
  ttlMs: number;
  waitMs: number;
  wakeToken?: string | undefined;
}

interface LockWait {
  agentId: string;
  ttlMs: number;
}

export type RenewResult = { renewed: true; expiresAt: number } | { renewed: false; error: string };

export interface MultiResult {
  locked: boolean;
  tokens?: Record<string, string>;
  fences?: Record<string, number>;
  expiresAt?: number;
  heldBy?: string;
}

export class Locks {
  readonly waits: WaitQueue<LockWait, Grant>;

  constructor(private readonly c: Ctx) {
    this.waits = c.waitQueue<LockWait, Grant>("lock", LOCK_WAKE_GRACE_MS);
    for (const row of c.store.q<LockRow>("SELECT * FROM locks").all()) this.arm(row.name, row.expires_at);
  }

  async acquire(req: AcquireRequest, signal?: AbortSignal): Promise<AcquireResult> {
    assertTtl(req.ttlMs);
    const first = this.c.tx((): { done: AcquireResult } | { wait: Waiter<LockWait, Grant> } => {
      let w = this.waits.find(req.wakeToken, req.name);
      if (!this.holder(req.name)) {
        if (w) this.waits.remove(w);
        return { done: this.grant(req.name, req.agentId, req.ttlMs) };
      }
      if (w) w.req = { agentId: req.agentId, ttlMs: req.ttlMs };
      if (req.waitMs <= 0) {
        // A poll with its wake_token is proof of interest: its place is kept for a fresh grace.
        if (w) this.waits.keep(w);
        return { done: this.denied(req.name, w) };
      }
      w ??= this.waits.enqueue(req.name, { agentId: req.agentId, ttlMs: req.ttlMs });
      return { wait: w };
    });
    if ("done" in first) return first.done;

    const w = first.wait;
    const outcome = await this.waits.block(w, this.c.clock.now() + req.waitMs, signal);
    if (outcome.kind === "granted") return outcome.value;
    return this.c.tx(() => {
      // The lock may have freed in the same instant the wait ended: take it rather than
      // report a free lock as held. A client that went away is never handed anything.
      if (outcome.kind === "timeout" && !this.holder(req.name)) {
        this.waits.remove(w);
        return this.grant(req.name, w.req.agentId, w.req.ttlMs);
      }
      return this.denied(req.name, this.waits.find(w.token, req.name));
    });
  }

  /** All-or-nothing over the deduplicated, byte-sorted names. */
  acquireMany(names: string[], agentId: string, ttlMs: number): MultiResult {
    assertTtl(ttlMs);
    const sorted = byteSortedUnique(names);
    return this.c.tx(() => {
      for (const name of sorted) {
        const h = this.holder(name);
        if (h) return { locked: false, heldBy: h.agent_id };
      }
      const tokens: Record<string, string> = {};
      const fences: Record<string, number> = {};
      let expiresAt = 0;
      for (const name of sorted) {
        const g = this.grant(name, agentId, ttlMs);
        tokens[name] = g.token;
        fences[name] = g.fence;
        expiresAt = g.expiresAt;
      }
      return { locked: true, tokens, fences, expiresAt };
    });
  }

  /** By token; or, when no token is given, by agent_id equal to the holder (v1). */
  release(name: string, token: string | undefined, agentId: string | undefined): boolean {
    if (token === undefined && agentId === undefined) {
      throw new AirlockError("invalid_argument", "missing lock_token or agent_id");
    }
    return this.c.tx(() => {
      const row = this.holder(name);
      if (!row) return false;
      if (token !== undefined ? row.token !== token : row.agent_id !== agentId) return false;
      this.free(name);
      return true;
    });
  }

  renew(name: string, token: string | undefined, agentId: string | undefined, ttlMs: number): RenewResult {
    if (token === undefined && agentId === undefined) {
      throw new AirlockError("invalid_argument", "missing lock_token or agent_id");
    }
    assertTtl(ttlMs);
    return this.c.tx((): RenewResult => {
      const row = this.holder(name);
      if (!row) return { renewed: false, error: "store: lock not found" };
      if (token !== undefined && row.token !== token) return { renewed: false, error: "store: lock not owned by supplied token" };
      if (token === undefined && row.agent_id !== agentId) return { renewed: false, error: "store: lock not owned by supplied agent_id" };
      const expiresAt = this.c.clock.now() + ttlMs;
      this.c.store.q("UPDATE locks SET expires_at = ? WHERE name = ?").run(expiresAt, name);
      this.arm(name, expiresAt);
      return { renewed: true, expiresAt };
    });
  }

  /** Frees every lock the agent holds (its presence ended), handing each to its next waiter. */
  releaseAllOf(agentId: string): string[] {
    const names = this.c.store.q<{ name: string }>("SELECT name FROM locks WHERE agent_id = ? ORDER BY name").all(agentId);
    for (const { name } of names) this.free(name);
    // Its places in line go too: a dead agent must never be handed a lock later.
    this.waits.removeWhere((w) => !w.attached && w.req.agentId === agentId);
    return names.map((n) => n.name);
  }

  list(): LockView[] {
    return this.c.read(() => {
      const now = this.c.clock.now();
      return this.c.store
        .q<LockRow>("SELECT * FROM locks WHERE expires_at > ? ORDER BY name")
        .all(now)
        .map((row) => ({
          ...row,
          waiters: this.waits.line(row.name).map((w) => ({
            agentId: w.req.agentId,
            attached: w.attached,
            waitingSeconds: secondsSince(w.since, now),
          })),
        }));
    });
  }

  heldBy(agentId: string): string[] {
    const now = this.c.clock.now();
    return this.c.store
      .q<{ name: string }>("SELECT name FROM locks WHERE agent_id = ? AND expires_at > ? ORDER BY name")
      .all(agentId, now)
      .map((r) => r.name);
  }

  /** The live holder row, if any. */
  private holder(name: string): LockRow | null {
    return this.c.store.q<LockRow>("SELECT * FROM locks WHERE name = ? AND expires_at > ?").get(name, this.c.clock.now());
  }

  private grant(name: string, agentId: string, ttlMs: number): Grant {
    const now = this.c.clock.now();
    const g: Grant = { locked: true, token: newToken(), fence: nextFence(this.c.store, `lock:${name}`), expiresAt: now + ttlMs };
    this.c.store
      .q(
        "INSERT INTO locks (name, agent_id, token, fence, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) " +
          "ON CONFLICT(name) DO UPDATE SET agent_id = excluded.agent_id, token = excluded.token, fence = excluded.fence, " +
          "acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
      )
      .run(name, agentId, g.token, g.fence, now, g.expiresAt);
    this.arm(name, g.expiresAt);
    return g;
  }

  /** Deletes the holder row and hands the lock to the earliest attached waiter, if any. */
  private free(name: string): void {
    this.c.store.q("DELETE FROM locks WHERE name = ?").run(name);
    this.c.scheduler.cancel(`lock:${name}`);
    const next = this.waits.firstAttached(name);
    if (next) this.waits.grant(next, this.grant(name, next.req.agentId, next.req.ttlMs));
  }

  private denied(name: string, w: Waiter<LockWait, Grant> | undefined): Denied {
    // No holder happens only for a caller that went away while the lock freed; its answer is dropped.
    const h = this.holder(name);
    const d: Denied = { locked: false, heldBy: h?.agent_id ?? "", expiresAt: h?.expires_at ?? this.c.clock.now() };
    if (w) d.wake = { token: w.token, position: this.waits.position(w) };
    return d;
  }

  private arm(name: string, expiresAt: number): void {
    this.c.scheduler.at(`lock:${name}`, expiresAt, () => {
      const row = this.c.store.q<LockRow>("SELECT * FROM locks WHERE name = ?").get(name);
      if (row && row.expires_at <= this.c.clock.now()) this.free(name);
    });
  }
}

export interface LockView extends LockRow {
  waiters: { agentId: string; attached: boolean; waitingSeconds: number }[];
}

export function assertTtl(ttlMs: number): void {
  if (!(ttlMs > 0)) throw new AirlockError("store", "store: ttlSeconds must be > 0");
}

/** Deduplicated names in byte order of their UTF-8 encoding (Go's string order). */
export function byteSortedUnique(names: string[]): string[] {
  return [...new Set(names)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}
