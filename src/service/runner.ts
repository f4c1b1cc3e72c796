// Everything the service installer does to the machine goes through a Runner, so that the
// plans are testable (a recording runner) and previewable (AIRLOCK_SERVICE_DRYRUN=1).
// Probes only look (which, exists, read-only commands) and run even in a dry run.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Runner {
  readonly dryRun: boolean;
  /** A command that changes something; the runner reports it (or, in a dry run, only reports it). */
  run(cmd: readonly string[]): CommandResult;
  /** A command that only looks; runs even in a dry run. */
  probe(cmd: readonly string[]): CommandResult;
  which(name: string): string | null;
  /** Waits up to timeoutMs for url to answer 200 "ok"; a probe, so it runs in a dry run too. */
  healthy(url: string, timeoutMs: number): Promise<boolean>;
  exists(path: string): boolean;
  /** A file's text, or undefined when there is none; a look, so it runs in a dry run too. */
  readFile(path: string): string | undefined;
  writeFile(path: string, content: string): void;
  removeFile(path: string): void;
  say(line: string): void;
}

function spawn(cmd: readonly string[]): CommandResult {
  try {
    const r = Bun.spawnSync([...cmd], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    return { code: r.exitCode ?? 1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  } catch (err) {
    return { code: 127, stdout: "", stderr: String(err) };
  }
}

export function systemRunner(opts: { dryRun: boolean; say?: (line: string) => void }): Runner {
  const say = opts.say ?? ((line: string) => console.log(line));
  const ok: CommandResult = { code: 0, stdout: "", stderr: "" };
  return {
    dryRun: opts.dryRun,
    run(cmd) {
      say(`${opts.dryRun ? "would run" : "run"}: ${cmd.join(" ")}`);
      return opts.dryRun ? ok : spawn(cmd);
    },
    probe: spawn,
    which: (name) => Bun.which(name),
    healthy: waitHealthy,
    exists: (path) => existsSync(path),
    readFile(path) {
      try {
        return readFileSync(path, "utf8");
      } catch {
        return undefined;
      }
    },
    writeFile(path, content) {
      if (opts.dryRun) {
        say(`would write ${path}:\n${content}`);
        return;
      }
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content, { mode: 0o644 });
      say(`wrote ${path}`);
    },
    removeFile(path) {
      if (opts.dryRun) return say(`would remove ${path}`);
      rmSync(path, { force: true });
      say(`removed ${path}`);
    },
    say,
  };
}

export async function waitHealthy(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  do {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(500) });
      if (r.ok && (await r.text()).trim() === "ok") return true;
    } catch {
      // not up yet
    }
    await Bun.sleep(100);
  } while (Date.now() < deadline);
  return false;
}
