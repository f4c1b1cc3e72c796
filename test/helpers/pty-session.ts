// An interactive client in a pseudo-terminal, the way a user runs it: `claude` with no flags, its
// TUI drawn into a terminal of 160×50, keys typed into it. The terminal is python3's `pty` module
// (test/helpers/pty-bridge.py; Bun has no pty of its own). The test reads the screen as text with
// the escape sequences removed and every blank dropped (Ink moves the cursor rather than print
// spaces, so "Yes, I trust this folder" arrives as "Yes,Itrustthisfolder"), and waits for what it
// expects to appear there, within a budget, before it types: no fixed sleeps.
//
// Bounded like runBounded: the bridge and the client's own session (the bridge prints its process
// group) are killed after the timeout, and in any case when the session is closed.
import { join } from "node:path";
import { CLIENT_TIMEOUT_MS, type RunResult } from "./live-session.ts";

const BRIDGE = join(import.meta.dir, "pty-bridge.py");

/** CSI and OSC sequences, charset switches and lone ESC codes: what a terminal interprets rather than shows. */
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MDEc]|[\x00-\x08\x0b-\x1f\x7f]/g;

/** The screen as the tests read it: no escape sequences, no blanks at all. */
export const squeeze = (s: string) => s.replace(ESCAPES, "").replace(/\s+/g, "");

export interface PtySession {
  /** Everything drawn so far, squeezed (see `squeeze`). */
  screen(): string;
  /** Types keys into the terminal ("\r" is Enter, "\x1b[B" the down arrow). */
  type(keys: string): void;
  /** Resolves once `what` (squeezed before comparing) is on the screen after `from` (a screen() length), or throws after ms. */
  waitFor(what: string, ms: number, from?: number): Promise<void>;
  /** True once the client has exited. */
  exited(): boolean;
  /** Closes the terminal (SIGHUP, SIGTERM), waits for the client to end, kills what is left, and returns the run. */
  close(graceMs?: number): Promise<RunResult>;
}

export function startInPty(cmd: string[], o: { cwd: string; env: Record<string, string>; timeoutMs?: number }): PtySession {
  const started = performance.now();
  const proc = Bun.spawn(["python3", BRIDGE, ...cmd], { cwd: o.cwd, env: o.env, stdin: "pipe", stdout: "pipe", stderr: "pipe", detached: true });
  let raw = "";
  let stderr = "";
  let done = false;
  let timedOut = false;
  const decoder = new TextDecoder();
  const pump = (async () => {
    for await (const chunk of proc.stdout) raw += decoder.decode(chunk, { stream: true });
  })();
  const pumpErr = (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const exit = proc.exited.then((code) => {
    done = true;
    return code;
  });
  const killAll = () => {
    const pgid = /^pgid (\d+)$/m.exec(stderr)?.[1];
    for (const g of [pgid ? Number(pgid) : undefined, proc.pid]) {
      if (g === undefined) continue;
      try {
        process.kill(-g, "SIGKILL");
      } catch {
        // The group is already gone.
      }
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killAll();
  }, o.timeoutMs ?? CLIENT_TIMEOUT_MS);

  const screen = () => squeeze(raw);
  return {
    screen,
    type(keys) {
      if (done) return;
      proc.stdin.write(keys);
      proc.stdin.flush();
    },
    async waitFor(what, ms, from = 0) {
      const needle = squeeze(what);
      const deadline = performance.now() + ms;
      while (!screen().includes(needle, from)) {
        if (done) throw new Error(`the client exited before showing ${JSON.stringify(what)}; screen ends: ${screen().slice(-600)}`);
        if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${JSON.stringify(what)}; screen ends: ${screen().slice(-600)}`);
        await Bun.sleep(50);
      }
    },
    exited: () => done,
    async close(graceMs = 10_000) {
      if (!done) {
        proc.stdin.end();
        const grace = setTimeout(killAll, graceMs);
        await exit;
        clearTimeout(grace);
      }
      clearTimeout(timer);
      const code = await exit;
      killAll(); // whatever the client left behind (a hook, an MCP helper)
      await Promise.all([pump, pumpErr]);
      return { code, timedOut, stdout: raw, stderr, events: [], ms: Math.round(performance.now() - started) };
    },
  };
}
