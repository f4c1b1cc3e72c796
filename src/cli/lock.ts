// `airlock lock NAME [--wait S] [--ttl S] -- CMD...`: the v2 headline case from a shell (two
// agents running `npm install` in one checkout). It takes the named lock (lock_resource),
// waiting in line as long as asked (50 s calls with the wake_token, the place in line on
// stderr), runs CMD the way `run` does (its own process group, signals forwarded, its exit
// code), renews the lock while CMD runs, and unlocks when CMD exits. A lock is not bound to a
// process: a `lock` killed with -9 leaves it held until its TTL lapses (--ttl, default 900 s).
import { hostname } from "node:os";
import { defineCommand } from "citty";
import { AirlockError, errorMessage } from "../errors.ts";
import { commandOf, keepRenewed, spawnChild, unrunnable } from "./child.ts";
import { type ClientOptions, PORT_ARG, rpc } from "./client.ts";
import { duration, ordinal } from "./format.ts";
import { labelAgent, secondsFlag, signalNumber, STOP_SIGNALS, StatusLine, tool } from "./wait.ts";

const MAX_WAIT_SECONDS = 50; // the daemon's cap per call: clients abandon tool calls near 60 s
const DEFAULT_TTL_SECONDS = 900; // lock_resource's own default
const PROGRESS_POLL_MS = 1000; // list_locks shows the line moving while the call blocks
const UNLOCK_TIMEOUT_MS = 2000;
const SETTLE_MS = 500; // after a stop signal, how long a call in flight gets to come back (locally: milliseconds)
const RECONNECT_MS = 30_000; // a daemon restarting: keep asking with the wake_token this long
const RECONNECT_EVERY_MS = 500;
/** Exit code when --wait ran out with the lock still held (sysexits' EX_TEMPFAIL: try again later). */
export const LOCK_TIMEOUT_EXIT = 75;

type Locked = { locked: true; lock_token: string; expires_in_seconds: number; fence?: number };
type Held = {
  locked: false;
  held_by: string;
  expires_in_seconds: number;
  wake_token?: string;
  queue_position?: number;
  deadlock?: { cycle: { agent_id: string; waits_for: string; resource: string }[] };
};
type LockView = { name: string; agent_id: string; expires_in_seconds: number; held_seconds?: number; waiters?: { agent_id: string }[] };

function heldLine(name: string, holder: string, expiresIn: number, position: number | undefined, heldFor?: number): string {
  const place = position ? ` — ${ordinal(position)} in line` : "";
  const since = heldFor === undefined ? "" : `${duration(heldFor)} held, `;
  return `waiting for lock ${name}${place}, held by ${holder} (${since}expires in ${duration(expiresIn)})`;
}

/** Unlocks quickly; never throws (the lock lapses at its TTL anyway). */
async function unlockQuietly(name: string, token: string, client: ClientOptions): Promise<void> {
  try {
    await rpc("tools/call", { name: "unlock_resource", arguments: { name, lock_token: token } }, client, UNLOCK_TIMEOUT_MS);
  } catch {
    // the daemon is gone: nothing to give back before the TTL
  }
}

interface LockAsk {
  name: string;
  agentId: string;
  ttlSeconds: number;
  /** Total seconds to wait; undefined: as long as it takes; 0: try once. */
  waitSeconds: number | undefined;
  client: ClientOptions;
  out: StatusLine;
  /** Told of every lock_resource call in flight, so a stop signal can hand back a grant it crossed. */
  inFlight(call: Promise<Locked | Held>): void;
}

/** Takes the lock, waiting in line up to ask.waitSeconds; when that ran out, the last refusal. */
async function waitForLock(ask: LockAsk): Promise<Locked | Held> {
  const started = performance.now();
  const deadline = ask.waitSeconds === undefined ? Number.POSITIVE_INFINITY : started + ask.waitSeconds * 1000;
  let wakeToken: string | undefined;
  let shown = false; // a place in line was shown: say when the lock came
  let answered = false;
  let poller: ReturnType<typeof setInterval> | undefined;
  const show = (line: string, position: number) => {
    shown = true;
    ask.out.progress(line, position);
  };
  const poll = async () => {
    try {
      const l = (await tool<LockView[]>("list_locks", {}, ask.client)).find((x) => x.name === ask.name);
      const i = l?.waiters?.findIndex((w) => w.agent_id === ask.agentId) ?? -1;
      if (l && i >= 0 && poller) show(heldLine(ask.name, l.agent_id, l.expires_in_seconds, i + 1, l.held_seconds), i + 1);
    } catch {
      // the blocked call reports a daemon that went away
    }
  };
  // While a call blocks (up to 50 s), list_locks shows the line moving.
  if (deadline > started) poller = setInterval(() => void poll(), PROGRESS_POLL_MS);
  let lostAt: number | undefined;
  try {
    for (;;) {
      // The first call only tries: a held lock is said (who holds it) before the call that blocks.
      const left = answered ? deadline - performance.now() : 0;
      const waitSeconds = Math.min(MAX_WAIT_SECONDS, Math.max(0, Math.ceil(left / 1000)));
      let a: Locked | Held;
      try {
        const call = tool<Locked | Held>(
          "lock_resource",
          { name: ask.name, agent_id: ask.agentId, ttl_seconds: ask.ttlSeconds, wait_seconds: waitSeconds, ...(wakeToken ? { wake_token: wakeToken } : {}) },
          ask.client,
        );
        ask.inFlight(call);
        a = await call;
        lostAt = undefined;
        answered = true;
      } catch (err) {
        // A daemon restarting: the place in line may be lost, but asking again is all there is to do.
        if (!(err instanceof AirlockError && err.code === "unavailable") || !answered) throw err;
        lostAt ??= performance.now();
        if (performance.now() - lostAt > RECONNECT_MS) throw err;
        await Bun.sleep(RECONNECT_EVERY_MS);
        continue;
      }
      if (a.locked) {
        if (poller) clearInterval(poller);
        poller = undefined;
        if (shown) ask.out.say(`got lock ${ask.name} after ${duration((performance.now() - started) / 1000)}`);
        return a;
      }
      if (a.deadlock) {
        const steps = a.deadlock.cycle.map((c) => `${c.agent_id} waits for ${c.waits_for} (${c.resource})`).join(", ");
        throw new AirlockError("store", `waiting for lock ${ask.name} would deadlock: ${steps}; release what ${ask.agentId} holds and try again`);
      }
      wakeToken = a.wake_token ?? wakeToken;
      const line = heldLine(ask.name, a.held_by, a.expires_in_seconds, a.queue_position);
      if (a.queue_position !== undefined) show(line, a.queue_position);
      else if (!shown && deadline > started) {
        // The try before the line: said once, in full (progress lines are per position).
        shown = true;
        ask.out.say(line);
      }
      if (deadline - performance.now() <= 0) {
        if (poller) clearInterval(poller);
        poller = undefined;
        ask.out.clear();
        return a;
      }
    }
  } finally {
    if (poller) clearInterval(poller);
    poller = undefined;
  }
}

export const lockCommand = defineCommand({
  meta: {
    name: "lock",
    description:
      "Run a command holding a named lock: airlock lock NAME [--wait S] -- CMD... Waits in line for the lock (holder and " +
      "place in line on stderr), runs CMD in its own process group, forwards Ctrl-C and other signals, renews the lock " +
      `while CMD runs, unlocks when it exits, and exits with CMD's code. With --wait, gives up after S seconds (0: try once) and exits ${LOCK_TIMEOUT_EXIT} without running CMD.`,
  },
  args: {
    name: { type: "positional", description: "The lock's name, e.g. npm-install", required: true },
    wait: { type: "string", description: "Seconds to wait for the lock in all (0: try once; default: as long as it takes)" },
    ttl: { type: "string", description: `Seconds the lock outlives a lock killed with -9 (default ${DEFAULT_TTL_SECONDS}; renewed every third of it)` },
    agent: { type: "string", description: "Agent id shown as the holder (default lock:<host>:<pid>, after AIRLOCK_LABEL_PREFIX if set)" },
    port: PORT_ARG,
  },
  async run({ args, rawArgs }) {
    const cmd = commandOf(rawArgs, args._.slice(1));
    if (cmd.length === 0) throw new AirlockError("usage", `no command given: airlock lock ${args.name} [--wait S] -- CMD...`);
    const waitSeconds = secondsFlag(args.wait, "--wait", { zero: true }); // 0: try once; absent: as long as it takes
    const ttlSeconds = Math.ceil(secondsFlag(args.ttl, "--ttl") ?? DEFAULT_TTL_SECONDS);
    const client = { port: args.port };
    const out = new StatusLine();
    const name = args.name;

    const bad = unrunnable(cmd[0]!);
    if (bad) {
      out.say(bad.message);
      process.exit(bad.code);
    }

    // Until CMD starts, a stop signal ends lock itself: the lock (if taken) is given back first.
    let token: string | undefined;
    let inFlight: Promise<Locked | Held> | undefined;
    let stopping = false;
    const stop = async (sig: string) => {
      if (stopping) return;
      stopping = true;
      out.clear();
      // A call in flight may come back with a grant that crossed the signal: it is handed back too.
      const late = token ? undefined : await Promise.race([inFlight?.catch(() => undefined), Bun.sleep(SETTLE_MS).then(() => undefined)]);
      if (late?.locked) token = late.lock_token;
      if (token) await unlockQuietly(name, token, client);
      out.say(`${sig}: ${token ? `unlocked ${name}` : `left the line for lock ${name}`}`);
      process.exit(128 + signalNumber(sig));
    };
    const handlers = STOP_SIGNALS.map((sig) => [sig, () => void stop(sig)] as const);
    for (const [sig, h] of handlers) process.on(sig, h);

    const agentId = args.agent ?? labelAgent(`lock:${hostname()}:${process.pid}`);
    const got = await waitForLock({ name, agentId, ttlSeconds, waitSeconds, client, out, inFlight: (c) => (inFlight = c) });
    if (stopping) return await new Promise<never>(() => {}); // the stop handler exits
    if (!got.locked) {
      out.say(`lock ${name} is held by ${got.held_by} (expires in ${duration(got.expires_in_seconds)}); gave up after --wait ${args.wait}, ${cmd[0]} was not run`);
      process.exit(LOCK_TIMEOUT_EXIT);
    }
    token = got.lock_token;

    let child: ReturnType<typeof spawnChild>;
    try {
      child = spawnChild(cmd, "airlock-lock");
    } catch (err) {
      await unlockQuietly(name, token, client);
      out.say(`cannot start ${cmd[0]}: ${errorMessage(err)}`);
      process.exit(127);
    }
    const stopRenewing = keepRenewed({ tool: "renew_lock", args: { name, lock_token: token, ttl_seconds: ttlSeconds }, what: `lock ${name}` }, ttlSeconds, cmd[0]!, client, out);
    for (const [sig, h] of handlers) process.off(sig, h);
    child.open(); // from here on, signals go to CMD's group
    const code = await child.exited();
    stopRenewing();
    await unlockQuietly(name, token, client);
    process.exit(code);
  },
});
