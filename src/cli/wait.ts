// `airlock wait`: block a shell script until it has a slot in a pool, print the slot_token, exit.
// It is also home to the one acquisition loop that `run` shares: queue once, then block in
// 50 s calls with the wake_token until granted, showing the place in line on stderr meanwhile,
// and withdraw the request when interrupted so nobody is left waiting behind a ghost.
import { constants, hostname } from "node:os";
import { defineCommand } from "citty";
import { DEFAULT_POOL } from "../domain/pools/index.ts";
import { env } from "../config/env.ts";
import { AirlockError } from "../errors.ts";
import { callTool, type ClientOptions, PORT_ARG, rpc } from "./client.ts";
import { duration, ordinal, type PoolInfo } from "./format.ts";

const MAX_WAIT_SECONDS = 50; // the daemon's cap per call: clients abandon tool calls near 60 s
// The blocked call answers only on a grant (or after 50 s): list_pools shows the line moving
// meanwhile. Once a second is as often as a human reads it, and costs the daemon nothing.
const PROGRESS_POLL_MS = 1000;
// After a withdrawal, how long to give a call in flight to come back (with a grant that
// crossed the withdrawal, which is then handed back). Both answer within milliseconds locally.
const SETTLE_MS = 500;
const WITHDRAW_TIMEOUT_MS = 2000;
// A daemon restarting (an upgrade, a service restart) keeps the queued request in its database:
// the wake_token resumes it. Past this, a daemon that does not come back is reported.
const RECONNECT_MS = 30_000;
const RECONNECT_EVERY_MS = 500;
const REASON_IN_LINE = 40; // a reason in the place-in-line line; the full one is in `airlock pools`

/** Signals that end a waiting `run` or `wait`; the request is withdrawn first. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export function signalNumber(sig: string): number {
  return (constants.signals as Record<string, number>)[sig] ?? 0;
}

/** Calls a tool; an error answer becomes an AirlockError with the daemon's message. */
export async function tool<T>(name: string, args: Record<string, unknown>, client: ClientOptions): Promise<T> {
  const r = await callTool(name, args, client);
  if (r.isError) {
    const message = (r.value as { error?: string }).error ?? JSON.stringify(r.value);
    throw new AirlockError("invalid_argument", `${name}: ${message}`);
  }
  return r.value as T;
}

/** Releases a slot or withdraws a request, quickly; true if the daemon had it. Never throws. */
export async function releaseQuietly(token: string, client: ClientOptions): Promise<boolean> {
  try {
    const r = (await rpc("tools/call", { name: "release_slot", arguments: { slot_token: token } }, client, WITHDRAW_TIMEOUT_MS)) as {
      content: { text: string }[];
    };
    return (JSON.parse(r.content[0]!.text) as { released?: boolean }).released === true;
  } catch {
    return false;
  }
}

/** A positive integer flag, or undefined when absent. */
export function countFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isInteger(n) || n < 1) throw new AirlockError("invalid_argument", `${flag} must be a whole number >= 1 (got ${JSON.stringify(value)})`);
  return n;
}

/** A number of seconds > 0 (>= 0 with `zero`, as `lock --wait 0` tries once), or undefined when absent. */
export function secondsFlag(value: string | undefined, flag: string, o: { zero?: boolean } = {}): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || (n === 0 && !o.zero)) {
    throw new AirlockError("invalid_argument", `${flag} must be a number of seconds ${o.zero ? ">=" : ">"} 0 (got ${JSON.stringify(value)})`);
  }
  return n;
}

/**
 * A reason tagged with AIRLOCK_LABEL_PREFIX (a sandbox's name, say "bwrap:issue-42"), so the
 * others in line see where the holder runs: "bwrap:issue-42 cargo test".
 */
export function labelReason(reason: string): string {
  const label = env.labelPrefix;
  return label ? `${label} ${reason}` : reason;
}

/** A default agent id tagged the same way: "bwrap:issue-42:run:host:pid". */
export function labelAgent(agentId: string): string {
  const label = env.labelPrefix;
  return label ? `${label}:${agentId}` : agentId;
}

export function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

// ---- the place-in-line line on stderr ----

interface Someone {
  agent_id: string;
  reason?: string;
  seconds: number;
}

interface Place {
  position: number;
  ahead: Someone[];
  holders: Someone[];
  capacity: number;
  inUse: number;
}

const someone = (x: { agent_id: string; reason?: string }, seconds: number): Someone => ({
  agent_id: x.agent_id,
  ...(x.reason ? { reason: x.reason } : {}),
  seconds,
});

function who(x: Someone): string {
  return `${x.agent_id} (${x.reason ? `${clip(x.reason, REASON_IN_LINE)}, ` : ""}${duration(x.seconds)})`;
}

function andMore(list: Someone[], shown: number): string {
  return list.length > shown ? ` and ${list.length - shown} more` : "";
}

export function placeLine(pool: string, p: Place): string {
  let s = `waiting for pool ${pool} — ${ordinal(p.position)} in line`;
  const next = p.ahead.at(-1);
  if (next) s += ` behind ${who(next)}${andMore(p.ahead, 1)}`;
  if (p.holders.length) s += `, held by ${p.holders.slice(0, 2).map(who).join(", ")}${andMore(p.holders, 2)}`;
  else s += `, ${p.inUse} of ${p.capacity} in use`;
  return s;
}

/** Where the agent stands in list_pools' view of the pool, or null if it is not (yet) in line. */
function placeIn(p: PoolInfo, agentId: string): Place | null {
  const active = p.waiters.filter((w) => w.state !== "paused");
  const i = active.findIndex((w) => w.agent_id === agentId);
  if (i < 0) return null;
  return {
    position: i + 1,
    ahead: active.slice(0, i).map((w) => someone(w, w.waiting_seconds)),
    holders: p.holders.map((h) => someone(h, h.held_seconds)),
    capacity: p.capacity,
    inUse: p.in_use,
  };
}

/** Lines prefixed `airlock:` on stderr; on a terminal the place in line is one line rewritten in place. */
export class StatusLine {
  private readonly tty = process.stderr.isTTY === true;
  private readonly prefix = this.tty && !env.noColor ? "\x1b[2mairlock:\x1b[22m " : "airlock: ";
  private live = false;
  private lastPosition = 0;

  /** The place in line: rewritten on a terminal, else printed only when the position changes. */
  place(pool: string, p: Place): void {
    this.progress(placeLine(pool, p), p.position);
  }

  /** A line about waiting: rewritten in place on a terminal, else printed only when `position` changes. */
  progress(line: string, position: number): void {
    if (this.tty) {
      // One terminal row: a wrapped line could not be rewritten in place with \r.
      const room = (process.stderr.columns || 100) - 1 - "airlock: ".length;
      process.stderr.write(`\r\x1b[2K${this.prefix}${clip(line, Math.max(20, room))}`);
      this.live = true;
    } else if (position !== this.lastPosition) {
      process.stderr.write(`${this.prefix}${line}\n`);
    }
    this.lastPosition = position;
  }

  say(message: string): void {
    this.clear();
    process.stderr.write(`${this.prefix}${message}\n`);
  }

  clear(): void {
    if (this.live) process.stderr.write("\r\x1b[2K");
    this.live = false;
  }
}

// ---- the acquisition loop ----

export interface SlotAsk {
  agentId: string;
  pool: string;
  weight: number;
  reason: string;
  /** Without pid: how long the slot lives unless renewed or released. */
  ttlSeconds?: number | undefined;
  /** Binds the request and the slot to this process's group. */
  pid?: number | undefined;
  /** Give up (withdrawing the request) after this many seconds; default never. */
  timeoutSeconds?: number | undefined;
  client: ClientOptions;
  out: StatusLine;
}

export interface Slot {
  token: string;
  pool: string;
  weight: number;
  fence: number;
}

type Granted = { granted: true; slot_token: string; pool: string; weight: number; fence: number };
type Refused = {
  granted: false;
  pool: string;
  capacity: number;
  in_use: number;
  queue_position: number;
  wake_token: string;
  holders: { agent_id: string; reason?: string; held_seconds: number }[];
  ahead: { agent_id: string; reason?: string; waiting_seconds: number }[];
  deadlock?: { cycle: { agent_id: string; waits_for: string; resource: string }[] };
};
type Answer = Granted | Refused;

const never = new Promise<never>(() => {});

/** acquire_slot's "unknown pool: gpu", with how to create it; any other error as it was. */
function unknownPool(err: unknown, pool: string): unknown {
  if (!(err instanceof AirlockError && err.message.includes(`unknown pool: ${pool}`))) return err;
  return new AirlockError(
    "invalid_argument",
    `unknown pool: ${pool}; create it with \`airlock pool set ${pool} --capacity N --reason TEXT\` (\`airlock pools\` lists the pools)`,
  );
}

/**
 * Takes a slot, waiting as long as needed (or until timeoutSeconds: then null, with the request
 * withdrawn). A stop signal while waiting withdraws the request and exits 128+N.
 */
export async function waitForSlot(ask: SlotAsk): Promise<Slot | null> {
  const started = performance.now();
  const deadline = ask.timeoutSeconds === undefined ? Number.POSITIVE_INFINITY : started + ask.timeoutSeconds * 1000;
  const base: Record<string, unknown> = { agent_id: ask.agentId, pool: ask.pool, weight: ask.weight, reason: ask.reason };
  if (ask.ttlSeconds !== undefined) base.ttl_seconds = ask.ttlSeconds;
  if (ask.pid !== undefined) base.pid = ask.pid;

  let wakeToken: string | undefined;
  let inFlight: Promise<Answer> | undefined;
  let stopping = false;

  const acquire = (waitSeconds: number): Promise<Answer> => {
    const call = tool<Answer>("acquire_slot", { ...base, wait_seconds: waitSeconds, ...(wakeToken ? { wake_token: wakeToken } : {}) }, ask.client);
    inFlight = call;
    // Once stopping, the stop handler owns the outcome: the loop never sees it.
    return call.catch((err) => (stopping ? never : Promise.reject(err))).then((a) => (stopping ? never : a));
  };

  const stop = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    ask.out.clear();
    if (wakeToken) await releaseQuietly(wakeToken, ask.client);
    // A call in flight may come back with a grant that crossed the withdrawal, or (the first
    // call) with the wake_token we did not have yet: either is handed back.
    const late = await Promise.race([inFlight?.catch(() => undefined), Bun.sleep(SETTLE_MS).then(() => undefined)]);
    if (late?.granted) await releaseQuietly(late.slot_token, ask.client);
    else if (late && late.wake_token !== wakeToken) await releaseQuietly(late.wake_token, ask.client);
    ask.out.say(`${sig}: left the line for pool ${ask.pool}`);
    process.exit(128 + signalNumber(sig));
  };
  const handlers = STOP_SIGNALS.map((sig) => [sig, () => void stop(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);

  let poller: ReturnType<typeof setInterval> | undefined;
  let polling = false;
  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      const pools = await tool<PoolInfo[]>("list_pools", {}, ask.client);
      const p = pools.find((x) => x.pool === ask.pool);
      const place = p && placeIn(p, ask.agentId);
      if (place && !stopping && poller) ask.out.place(ask.pool, place);
    } catch {
      // the blocked call reports a daemon that went away; the display just stays as it was
    } finally {
      polling = false;
    }
  };

  try {
    let a = await acquire(0).catch((err: unknown) => {
      throw unknownPool(err, ask.pool);
    });
    let lostAt: number | undefined;
    while (!a.granted) {
      if (a.deadlock) {
        ask.out.clear();
        const steps = a.deadlock.cycle.map((c) => `${c.agent_id} waits for ${c.waits_for} (${c.resource})`).join(", ");
        throw new AirlockError("store", `waiting for pool ${ask.pool} would deadlock: ${steps}; release what ${ask.agentId} holds and try again`);
      }
      wakeToken = a.wake_token;
      ask.out.place(ask.pool, {
        position: a.queue_position,
        ahead: a.ahead.map((w) => someone(w, w.waiting_seconds)),
        holders: a.holders.map((h) => someone(h, h.held_seconds)),
        capacity: a.capacity,
        inUse: a.in_use,
      });
      poller ??= setInterval(() => void poll(), PROGRESS_POLL_MS);
      const left = deadline - performance.now();
      if (left <= 0) {
        clearInterval(poller);
        poller = undefined;
        await releaseQuietly(wakeToken, ask.client);
        // The request may have been offered in between: the withdrawal handed the offer on.
        ask.out.clear();
        return null;
      }
      try {
        a = await acquire(Math.min(MAX_WAIT_SECONDS, Math.max(1, Math.ceil(left / 1000))));
        lostAt = undefined;
      } catch (err) {
        // The last answer stands while the daemon is away; the loop asks again with the token.
        if (!(err instanceof AirlockError && err.code === "unavailable")) throw err;
        lostAt ??= performance.now();
        if (performance.now() - lostAt > RECONNECT_MS) throw err;
        await Bun.sleep(RECONNECT_EVERY_MS);
      }
    }
    if (poller) {
      clearInterval(poller);
      poller = undefined;
      ask.out.say(`got a slot in pool ${ask.pool} after ${duration((performance.now() - started) / 1000)}`);
    }
    return { token: a.slot_token, pool: a.pool, weight: a.weight, fence: a.fence };
  } finally {
    if (poller) clearInterval(poller);
    for (const [sig, h] of handlers) process.off(sig, h);
  }
}

export const waitCommand = defineCommand({
  meta: {
    name: "wait",
    description:
      "Wait for a slot in a pool and print its slot_token (only that, on stdout); your place in line goes to stderr. " +
      "The slot is not tied to a process (this one exits at once): it lives --ttl seconds (default 900) unless you " +
      "`airlock release TOKEN` first. To run one command with a slot, prefer `airlock run -- CMD`.",
  },
  args: {
    pool: { type: "string", description: "Pool to wait in (default heavy)" },
    timeout: { type: "string", description: "Give up after this many seconds: the request is withdrawn and wait exits 1" },
    weight: { type: "string", description: "Capacity units the job needs (default 1)" },
    reason: { type: "string", description: "What you will run, shown to the others in line" },
    agent: { type: "string", description: "Agent id (default wait:<host>:<pid>, after AIRLOCK_LABEL_PREFIX if set)" },
    ttl: { type: "string", description: "Seconds the slot lives unless released (default 900)" },
    port: PORT_ARG,
  },
  async run({ args }) {
    const pool = args.pool ?? DEFAULT_POOL;
    const timeoutSeconds = secondsFlag(args.timeout, "--timeout");
    const out = new StatusLine();
    const slot = await waitForSlot({
      agentId: args.agent ?? labelAgent(`wait:${hostname()}:${process.pid}`),
      pool,
      weight: countFlag(args.weight, "--weight") ?? 1,
      reason: labelReason(args.reason ?? "airlock wait"),
      ttlSeconds: secondsFlag(args.ttl, "--ttl"),
      timeoutSeconds,
      client: { port: args.port },
      out,
    });
    if (!slot) {
      // An expected outcome, not a broken contract: said on stderr, exit 1.
      out.say(`no slot in pool ${pool} within ${duration(timeoutSeconds ?? 0)}; the request was withdrawn`);
      process.exitCode = 1;
      return;
    }
    console.log(slot.token);
  },
});
