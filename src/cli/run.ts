// `airlock run -- CMD...`: the shell's way to use a pool. It waits for a slot (showing its place
// in line), runs CMD in a process group of its own with the slot bound to that group, forwards
// signals to it, and exits with CMD's code. Binding the slot to CMD's group (not to this
// process) is what makes it safe: kill -9 of `run` leaves the slot held exactly as long as the
// work it guards, and a background job CMD leaves behind keeps it until that job exits too.
import { accessSync, closeSync, constants as fs, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import type { Subprocess } from "bun";
import { defineCommand } from "citty";
import { AirlockError, errorMessage } from "../errors.ts";
import { bindProcess, groupAlive, groupSize } from "../machine/process.ts";
import { clip, countFlag, labelAgent, labelReason, releaseQuietly, type Slot, signalNumber, StatusLine, tool, waitForSlot } from "./wait.ts";

const MAX_REASON = 200; // the default reason is the command line; a whole script is too long to show
// Forwarded to CMD's group while it runs. INT, TERM and HUP as asked; QUIT (Ctrl-\) and WINCH
// because CMD has its own session: the terminal sends them to `run`'s group only.
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH"] as const;
// CMD starts only once its slot is bound to its group: this sh waits for a line on fd 3 and then
// execs CMD (same pid, same group, same start time, so the binding holds). If `run` dies first,
// the pipe closes, the read fails and CMD never starts.
const GATE = 'IFS= read -r go <&3 || exit 125; exec 3<&-; exec "$@"';

/** The words after `--` exactly as given (or the positionals, when there is no `--`). */
function commandOf(rawArgs: string[], positionals: string[]): string[] {
  const i = rawArgs.indexOf("--");
  return i >= 0 ? rawArgs.slice(i + 1) : positionals;
}

function commandLine(cmd: string[]): string {
  return cmd.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)).join(" ");
}

/** Why CMD cannot be started, as the shell would say it (exit 127 or 126), or null if it can. */
function unrunnable(name: string): { code: number; message: string } | null {
  if (!name.includes("/")) return Bun.which(name) ? null : { code: 127, message: `${name}: command not found` };
  try {
    if (statSync(name).isDirectory()) return { code: 126, message: `${name}: is a directory` };
    accessSync(name, fs.X_OK);
    return null;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return code === "ENOENT" ? { code: 127, message: `${name}: no such file` } : { code: 126, message: `${name}: permission denied` };
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

function spawnGated(cmd: string[]): { child: Subprocess; open: () => void } {
  // detached: the child calls setsid, so it leads a new session and process group (pgid = pid).
  const child = Bun.spawn(["/bin/sh", "-c", GATE, "airlock-run", ...cmd], { stdio: ["inherit", "inherit", "inherit", "pipe"], detached: true });
  const gate = child.stdio[3] as unknown as number;
  return {
    child,
    open() {
      try {
        writeSync(gate, "go\n");
      } finally {
        closeSync(gate);
      }
    },
  };
}

export const runSlotCommand = defineCommand({
  meta: {
    name: "run",
    description:
      "Run a command with a slot in a pool: airlock run [--pool heavy] -- CMD... Waits for its turn (place in line on " +
      "stderr), runs CMD in its own process group with the slot bound to that group, forwards Ctrl-C and other " +
      "signals, and exits with CMD's code. The slot is released when the group's last process exits, even if run is killed.",
  },
  args: {
    pool: { type: "string", description: "Pool to take a slot in (default heavy)" },
    weight: { type: "string", description: "Capacity units the command needs (default 1)" },
    reason: { type: "string", description: "Shown to the others in line (default: the command line), after AIRLOCK_LABEL_PREFIX if set" },
    agent: { type: "string", description: "Agent id (default run:<host>:<pid>, after AIRLOCK_LABEL_PREFIX if set)" },
    "fail-open": { type: "boolean", description: "With no daemon reachable, warn and run the command without a slot" },
    port: { type: "string", description: "Daemon port (default 27183 or AIRLOCK_PORT)" },
  },
  async run({ args, rawArgs }) {
    const cmd = commandOf(rawArgs, args._);
    if (cmd.length === 0) throw new AirlockError("invalid_argument", "no command given: airlock run [--pool heavy] -- CMD...");
    const pool = args.pool ?? "heavy";
    const weight = countFlag(args.weight, "--weight") ?? 1;
    const client = { port: args.port };
    const out = new StatusLine();

    // Checked before queueing: nobody should wait twenty minutes in line for a typo.
    const bad = unrunnable(cmd[0]!);
    if (bad) {
      out.say(bad.message);
      process.exit(bad.code);
    }

    let slot: Slot | null = null;
    try {
      slot = await waitForSlot({
        agentId: args.agent ?? labelAgent(`run:${hostname()}:${process.pid}`),
        pool,
        weight,
        reason: labelReason(args.reason ?? clip(commandLine(cmd), MAX_REASON)),
        pid: ownGroupBindable() ? process.pid : undefined,
        client,
        out,
      });
    } catch (err) {
      if (!(err instanceof AirlockError && err.code === "unavailable")) throw err;
      if (!args["fail-open"]) throw new AirlockError("unavailable", `${err.message} (or pass --fail-open to run without a slot)`);
      out.say(`warning: running without a slot (--fail-open): ${err.message}`);
    }

    let spawned: ReturnType<typeof spawnGated>;
    try {
      spawned = spawnGated(cmd);
    } catch (err) {
      if (slot) await releaseQuietly(slot.token, client);
      out.say(`cannot start ${cmd[0]}: ${errorMessage(err)}`);
      process.exit(127);
    }
    const { child, open } = spawned;
    const binding = bindProcess(child.pid); // CMD's group as it is now, to tell when it is empty
    let boundToCmd = false;
    if (slot) {
      try {
        await tool("renew_slot", { slot_token: slot.token, pid: child.pid }, client);
        boundToCmd = true;
      } catch (err) {
        // Still bound to this process: released when run exits, or explicitly below.
        out.say(`warning: could not bind the slot to ${cmd[0]}'s process group (${errorMessage(err)}); it stays bound to this process`);
      }
    }

    const forward = FORWARDED.map(
      (sig) =>
        [
          sig,
          () => {
            try {
              process.kill(-child.pid, sig);
            } catch {
              // the group is already gone
            }
          },
        ] as const,
    );
    for (const [sig, h] of forward) process.on(sig, h);
    open();
    await child.exited;
    for (const [sig, h] of forward) process.off(sig, h);
    const code = child.exitCode ?? 128 + signalNumber(String(child.signalCode ?? ""));

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
