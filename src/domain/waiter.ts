// A waiter and the shapes around it (domain/wait.ts is the mechanism that keeps them): who is in
// line, how a blocked call ends, how a place is written down for the lines' stored form
// (lines.ts) and for other daemons, and the numbers a kernel's queues share.
export type Outcome<R> = { kind: "granted"; value: R } | { kind: "timeout" } | { kind: "aborted" };

export interface Waiter<Req, R> {
  readonly id: number;
  /** The lines it stands in (one for most primitives; several for a lock group). */
  readonly keys: readonly string[];
  /** keys[0]. */
  readonly key: string;
  readonly token: string;
  /** Who asked; with the keys, what finds a waiter whose caller lost its token. */
  readonly agentId: string | undefined;
  req: Req;
  /** When it joined the line (ms); reset when it rejoins at the tail. */
  since: number;
  /** Arrival order, shared by every line; rejoining at the tail takes a new one. */
  order: number;
  attached: boolean;
  /** The daemon whose call this is, when it is another daemon's (a shared store); else undefined. */
  daemon?: string | undefined;
  /** While detached: when its grace ends and it leaves the line (ms; stored with the lines). */
  graceEnds?: number | undefined;
  /** @internal the blocked call's client; a grant to a call whose client is gone is revoked */
  signal?: AbortSignal | undefined;
  /** @internal the blocked call's resolver, while attached */
  settle?: ((o: Outcome<R>) => void) | undefined;
}

/** Is this waiter's call blocked right now, with its client still there? */
export function isBlocked(w: { attached: boolean; signal?: AbortSignal | undefined }): boolean {
  return w.attached && !w.signal?.aborted;
}

export interface WaitCodec<Req, R> {
  encodeReq(req: Req): unknown;
  decodeReq(json: unknown): Req;
  encodeValue?(value: R): unknown;
  decodeValue?(json: unknown): R;
}

/** A grant to another daemon's waiter, for the cluster to write down (see docs/cluster.md). */
export type ForeignGrant = (w: Waiter<unknown, unknown>, value: unknown) => void;

/** A waiter as the cluster keeps it in the shared store. */
export interface SharedWaiter<Req> {
  token: string;
  keys: string[];
  agentId: string | undefined;
  req: Req;
  order: number;
  since: number;
  attached: boolean;
  daemon: string;
  graceEnds: number | undefined;
}

export interface EnqueueOptions {
  /** Restoring a persisted waiter: its token and arrival time. */
  token?: string;
  since?: number;
}

/**
 * The numbers a kernel's wait queues share. Each kernel has its own (createCtx makes it): two
 * kernels in one process (domain tests, a bench's pair) never number each other's waiters.
 */
export class Sequences {
  /** The last waiter id given (its deadline's and grace's scheduler keys). */
  waiter = 0;
  /** The last arrival order given: every line of every queue orders any two waiters alike. */
  order = 0;
  /** How many blocked calls have been handed a grant so far (the HTTP layer answers them first). */
  handOffs = 0;
}
