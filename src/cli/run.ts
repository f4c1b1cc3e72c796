// `airlock run -- CMD...`: the shell's way to use a pool. It waits for a slot (showing its place
// in line), runs CMD in a process group of its own with the slot bound to that group, forwards
// signals to it, and exits with CMD's code. Binding the slot to CMD's group (not to this
// process) is what makes it safe: kill -9 of `run` leaves the slot held exactly as long as the
// work it guards, and a background job CMD leaves behind keeps it until that job exits too.
// A pid means that only to a daemon in the same PID namespace: from a container or a bwrap
// --unshare-pid sandbox, `run` holds an unbound slot instead and keeps it alive by heartbeat.
import { hostname } from "node:os";
import { defineCommand } from "citty";
import { DEFAULT_POOL } from "../domain/pools/index.ts";
import { AirlockError, errorMessage } from "../errors.ts";
import { bindProcess, groupAlive, groupSize, pidNamespace } from "../machine/process.ts";
import { commandLine, commandOf, keepRenewed, RENEWALS_PER_TTL, spawnChild, unrunnable } from "./child.ts";
import { type ClientOptions, PORT_ARG, rpc } from "./client.ts";
import { duration } from "./format.ts";
import { clip, countFlag, labelAgent, labelReason, releaseQuietly, type Slot, StatusLine, tool, waitForSlot } from "./wait.ts";

const MAX_REASON = 200; // the default reason is the command line; a whole script is too long to show
// Heartbeat mode: a `run` killed with -9 leaves its slot held this long at most, so a minute is
// what a vanished sandbox costs the others in line; three renewals per TTL survive a daemon
// restart or a stalled call or two before the slot could lapse under a command still running.
const HEARTBEAT_TTL_SECONDS = 60;
const IDENTITY_TIMEOUT_MS = 10_000; // a local daemon answers in milliseconds; this is only a hang guard

/** What `airlock/identity` answers. */
export interface DaemonIdentity {
  pid: number;
  /** `readlink /proc/self/ns/pid` in the daemon, or null where it has none (macOS). */
  pid_namespace: string | null;
  version: string;
}

/** How `run` holds its slot: bound to CMD's process group by pid, or unbound and renewed by heartbeat. */
export type Holding = { mode: "bound" } | { mode: "heartbeat"; why: "asked" | "namespace" };

/**
 * Bind by pid only when the daemon sees the same pids as this process: the same PID namespace
 * (or neither has one, as on macOS). A daemon too old to say (null) is bound to as before.
 * Anything else, including one side without /proc, cannot be trusted with a pid.
 */
export function holdingFor(own: string | null, daemon: DaemonIdentity | null, pidBinding: boolean): Holding {
  if (!pidBinding) return { mode: "heartbeat", why: "asked" };
  if (daemon === null || daemon.pid_namespace === own) return { mode: "bound" };
  return { mode: "heartbeat", why: "namespace" };
}

/** The daemon's identity, or null when it is too old to have `airlock/identity`. Throws "unavailable" when none answers. */
async function daemonIdentity(client: ClientOptions): Promise<DaemonIdentity | null> {
  try {
    return (await rpc("airlock/identity", {}, client, IDENTITY_TIMEOUT_MS)) as DaemonIdentity;
  } catch (err) {
    if (err instanceof AirlockError && err.code === "internal" && err.message.startsWith("method not found")) return null;
    throw err;
  }
}

/**
 * Whether the request may be bound to this process, so that it dies with it (and the slot, until
 * CMD has its own group). Not when this process is in init's group (a shell that is PID 1 in a
 * container, without job control): the daemon refuses such a pid, and then the request has to
 * go unbound, withdrawn on a signal and otherwise left to lapse.
 */
function ownGroupBindable(): boolean {
  const me = bindProcess(process.pid);
  return me !== null && me.pgid !== 1;
}

export const runSlotCommand = defineCommand({
  meta: {
    name: "run",
    description:
      "Run a command with a slot in a pool: airlock run [--pool heavy] -- CMD... Waits for its turn (place in line on " +
      "stderr), runs CMD in its own process group with the slot bound to that group, forwards Ctrl-C and other " +
      "signals, and exits with CMD's code. The slot is released when the group's last process exits, even if run is killed. " +
      "In another PID namespace than the daemon's (a container, bwrap --unshare-pid), or with --no-pid-binding, run " +
      "holds the slot by heartbeat instead: renewed while CMD runs, released when it exits, lapsing --ttl seconds after a kill -9 of run.",
  },
  args: {
    pool: { type: "string", description: "Pool to take a slot in (default heavy)" },
    weight: { type: "string", description: "Capacity units the command needs (default 1)" },
    reason: { type: "string", description: "Shown to the others in line (default: the command line), after AIRLOCK_LABEL_PREFIX if set" },
    agent: { type: "string", description: "Agent id (default run:<host>:<pid>, after AIRLOCK_LABEL_PREFIX if set)" },
    "pid-binding": {
      type: "boolean",
      default: true,
      description: "Bind the slot to CMD's process group when run shares the daemon's PID namespace (the default)",
      negativeDescription: "Never bind by pid: hold the slot by heartbeat, as run does in another PID namespace",
    },
    ttl: { type: "string", description: `Heartbeat mode only: seconds the slot outlives a run killed with -9 (default ${HEARTBEAT_TTL_SECONDS}; renewed every third of it)` },
    "fail-open": { type: "boolean", description: "With no daemon reachable, warn and run the command without a slot" },
    port: PORT_ARG,
  },
  async run({ args, rawArgs }) {
    const cmd = commandOf(rawArgs, args._);
    if (cmd.length === 0) throw new AirlockError("invalid_argument", "no command given: airlock run [--pool heavy] -- CMD...");
    const pool = args.pool ?? DEFAULT_POOL;
    const weight = countFlag(args.weight, "--weight") ?? 1;
    const ttlSeconds = countFlag(args.ttl, "--ttl") ?? HEARTBEAT_TTL_SECONDS;
    const client = { port: args.port };
    const out = new StatusLine();

    // Checked before queueing: nobody should wait twenty minutes in line for a typo.
    const bad = unrunnable(cmd[0]!);
    if (bad) {
      out.say(bad.message);
      process.exit(bad.code);
    }

    let slot: Slot | null = null;
    let holding: Holding = { mode: "bound" };
    try {
      const own = pidNamespace();
      const daemon = await daemonIdentity(client);
      holding = holdingFor(own, daemon, args["pid-binding"] !== false);
      if (holding.mode === "heartbeat" && holding.why === "namespace") {
        // One line, since it changes what a kill -9 of run means; asked for with --no-pid-binding, it goes unsaid.
        out.say(
          `this run is in another PID namespace (${own ?? "none"}) than the daemon (${daemon?.pid_namespace ?? "none"}): ` +
            `it holds the slot in pool ${pool} by heartbeat (ttl ${duration(ttlSeconds)}, renewed every ${duration(ttlSeconds / RENEWALS_PER_TTL)}), not by pid`,
        );
      }
      slot = await waitForSlot({
        agentId: args.agent ?? labelAgent(`run:${hostname()}:${process.pid}`),
        pool,
        weight,
        reason: labelReason(args.reason ?? clip(commandLine(cmd), MAX_REASON)),
        ...(holding.mode === "bound" ? { pid: ownGroupBindable() ? process.pid : undefined } : { ttlSeconds }),
        client,
        out,
      });
    } catch (err) {
      if (!(err instanceof AirlockError && err.code === "unavailable")) throw err;
      if (!args["fail-open"]) throw new AirlockError("unavailable", `${err.message} (or pass --fail-open to run without a slot)`);
      out.say(`warning: running without a slot (--fail-open): ${err.message}`);
    }

    let spawned: ReturnType<typeof spawnChild>;
    try {
      spawned = spawnChild(cmd, "airlock-run");
    } catch (err) {
      if (slot) await releaseQuietly(slot.token, client);
      out.say(`cannot start ${cmd[0]}: ${errorMessage(err)}`);
      process.exit(127);
    }
    const { child } = spawned;
    const binding = bindProcess(child.pid); // CMD's group as it is now, to tell when it is empty
    let boundToCmd = false;
    let stopHeartbeat = () => {};
    if (slot && holding.mode === "heartbeat") {
      stopHeartbeat = keepRenewed({ tool: "renew_slot", args: { slot_token: slot.token, ttl_seconds: ttlSeconds }, what: `the slot in pool ${pool}` }, ttlSeconds, cmd[0]!, client, out);
    } else if (slot) {
      try {
        await tool("renew_slot", { slot_token: slot.token, pid: child.pid }, client);
        boundToCmd = true;
      } catch (err) {
        // Still bound to this process: released when run exits, or explicitly below.
        out.say(`warning: could not bind the slot to ${cmd[0]}'s process group (${errorMessage(err)}); it stays bound to this process`);
      }
    }

    spawned.open();
    const code = await spawned.exited();
    stopHeartbeat();

    if (slot) {
      if (boundToCmd && binding && groupAlive(binding)) {
        const n = groupSize(binding);
        out.say(
          `${cmd[0]} exited, but ${n === 1 ? "a process" : `${n} processes`} it started still run in its group ${binding.pgid}: ` +
            `the slot in pool ${pool} stays held until ${n === 1 ? "it exits" : "they exit"}`,
        );
      } else {
        // Explicitly, rather than in the daemon's next group check: the next in line starts now.
        // (False when the check got there first, or the daemon is gone: either way nothing is held.)
        await releaseQuietly(slot.token, client);
      }
    }
    process.exit(code);
  },
});
