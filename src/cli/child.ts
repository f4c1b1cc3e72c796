// The command that `airlock run` and `airlock lock` start while they hold what they hold: CMD
// in a process group (and session) of its own, started only when the holder opens its gate,
// with the signals a user sends forwarded to that group, and its exit code (or 128+N for a
// signal) handed back, as a shell would. One implementation for both verbs.
import { accessSync, closeSync, constants as fs, statSync, writeSync } from "node:fs";
import type { Subprocess } from "bun";
import { AirlockError } from "../errors.ts";
import { shellQuote } from "../shell.ts";
import { type ClientOptions, rpc } from "./client.ts";
import { signalNumber, type StatusLine } from "./wait.ts";

/** Renewals per TTL while CMD runs: a renewal or two may stall (a daemon restart) before the hold could lapse. */
export const RENEWALS_PER_TTL = 3;

/**
 * Keeps what the holder holds alive while CMD runs: calls `renew.tool` with `renew.args` every
 * ttl/RENEWALS_PER_TTL. A renewal that gets no answer is retried at the next beat (the daemon may
 * be restarting); a hold the daemon no longer has is said once, and CMD keeps running (stopping
 * someone's build is worse than overcommitting). Returns the function that stops renewing.
 */
export function keepRenewed(
  renew: { tool: string; args: Record<string, unknown>; what: string },
  ttlSeconds: number,
  cmd: string,
  client: ClientOptions,
  out: StatusLine,
): () => void {
  const everyMs = (ttlSeconds * 1000) / RENEWALS_PER_TTL;
  let lost = false;
  let busy = false;
  const beat = async () => {
    if (busy || lost) return;
    busy = true;
    try {
      // Bounded by the beat: a call that hangs must not hold up the next one past the TTL.
      const r = (await rpc("tools/call", { name: renew.tool, arguments: renew.args }, client, everyMs)) as { content: { text: string }[] };
      const v = JSON.parse(r.content[0]!.text) as { renewed?: boolean; error?: string };
      if (v.renewed !== true) {
        lost = true;
        out.say(`warning: ${renew.what} is gone (${v.error ?? "not renewed"}); ${cmd} keeps running without it`);
      }
    } catch {
      // no answer right now: the hold lives until its TTL, and the next beat tries again
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void beat(), everyMs);
  return () => clearInterval(timer);
}

// Forwarded to CMD's group while it runs. INT, TERM and HUP as asked; QUIT (Ctrl-\) and WINCH
// because CMD has its own session: the terminal sends them to the holder's group only.
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGWINCH"] as const;
// CMD starts only once the holder says so: this sh waits for a line on fd 3 and then execs CMD
// (same pid, same group, same start time, so a binding to its pid holds). If the holder dies
// first, the pipe closes, the read fails and CMD never starts.
const GATE = 'IFS= read -r go <&3 || exit 125; exec 3<&-; exec "$@"';

/**
 * The words after `--` exactly as given (or the positionals, when there is no `--`). `positionals`
 * is citty's `args._` past the command's own (it ends with the words after `--`): one before `--`
 * would be lost, so it is refused (strict.ts refuses it first, with the usage).
 */
export function commandOf(rawArgs: string[], positionals: string[]): string[] {
  const i = rawArgs.indexOf("--");
  if (i < 0) return positionals;
  const cmd = rawArgs.slice(i + 1);
  const before = positionals.slice(0, Math.max(0, positionals.length - cmd.length));
  if (before.length > 0) throw new AirlockError("usage", `the command goes after -- only; got ${before.map((w) => JSON.stringify(w)).join(" ")} before it`);
  return cmd;
}

/** CMD as a shell line, quoted where needed: the default reason others see. */
export function commandLine(cmd: string[]): string {
  return cmd.map(shellQuote).join(" ");
}

/** Why CMD cannot be started, as the shell would say it (exit 127 or 126), or null if it can. */
export function unrunnable(name: string): { code: number; message: string } | null {
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

export interface Child {
  child: Subprocess;
  /** Lets CMD start (exec past the gate). */
  open(): void;
  /** Resolves with CMD's exit code, 128+N when a signal ended it; signals are forwarded until then. */
  exited(): Promise<number>;
}

/** Spawns CMD behind its gate, in a process group of its own (pgid = its pid). Throws if it cannot be spawned. */
export function spawnChild(cmd: string[], argv0: string): Child {
  // detached: the child calls setsid, so it leads a new session and process group (pgid = pid).
  const child = Bun.spawn(["/bin/sh", "-c", GATE, argv0, ...cmd], { stdio: ["inherit", "inherit", "inherit", "pipe"], detached: true });
  const gate = child.stdio[3] as unknown as number;
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
  let opened = false;
  return {
    child,
    open() {
      if (opened) return;
      opened = true;
      for (const [sig, h] of forward) process.on(sig, h);
      try {
        writeSync(gate, "go\n");
      } finally {
        closeSync(gate);
      }
    },
    async exited() {
      await child.exited;
      for (const [sig, h] of forward) process.off(sig, h);
      return child.exitCode ?? 128 + signalNumber(String(child.signalCode ?? ""));
    },
  };
}
