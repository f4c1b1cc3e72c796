// The file plumbing every client's setup shares: read, a lock next to the target, a one-time
// backup, an atomic write that keeps (or tightens) the mode, a unified diff for --dry-run, and the
// small record of what setup created (so --remove can restore "no file" or drop a container it
// added, and nothing else). Edits are computed under the lock from the bytes on disk, so two
// `airlock setup` runs, or setup and an editor saving, never interleave a read and a write.
import { chmodSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, constants } from "node:fs";
import { dirname, join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { AirlockError, errorMessage } from "../errors.ts";

export const BACKUP_SUFFIX = ".airlock-backup";
export const LOCK_SUFFIX = ".airlock-lock";
/** A lock file older than this is a crashed run's: taken over rather than waited on forever. */
const STALE_LOCK_MS = 30_000;
/** How long a run waits for another run's lock before it gives up with a clear message. */
const LOCK_WAIT_MS = 10_000;

export function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new AirlockError("config", `cannot read ${path}: ${errorMessage(err)}`);
  }
}

/** Runs `fn` holding an O_EXCL lock file next to `path` (removed after, also on error). */
export async function withFileLock<T>(path: string, fn: () => T): Promise<T> {
  const lock = path + LOCK_SUFFIX;
  mkdirSync(dirname(path), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new AirlockError("config", `cannot lock ${path}: ${errorMessage(err)}`);
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      } catch {
        // Gone between the two calls: try again.
      }
      if (Date.now() > deadline) throw new AirlockError("config", `${path} is locked by another airlock setup (${lock}); try again, or delete the lock file if no setup is running`);
      await Bun.sleep(50);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Copies the file to `<file>.airlock-backup` once: the first backup is the user's original. */
export function backupOnce(path: string): void {
  const backup = path + BACKUP_SUFFIX;
  if (existsSync(path) && !existsSync(backup)) {
    copyFileSync(path, backup);
    chmodSync(backup, statSync(path).mode & 0o777);
  }
}

/**
 * Writes through a temporary file and a rename, so a reader never sees half a file. The mode is
 * the existing file's, tightened to 0600 when `secret` (the file holds a token); a new file is
 * 0600 when secret, else 0644.
 */
export function writeAtomic(path: string, text: string, secret = false, executable = false): void {
  mkdirSync(dirname(path), { recursive: true });
  let mode = secret ? 0o600 : executable ? 0o755 : 0o644;
  try {
    mode = statSync(path).mode & 0o777;
    if (secret) mode &= 0o700;
  } catch {
    // A new file.
  }
  const tmp = `${path}.airlock-tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** A unified diff of one file's change (`/dev/null` for a file created or deleted). */
export function unifiedDiff(path: string, before: string | null, after: string | null): string {
  return createTwoFilesPatch(before === null ? "/dev/null" : path, after === null ? "/dev/null" : path, before ?? "", after ?? "", "", "", { context: 3 }).replace(/^(Index: .*\n)?=+\n/, "");
}

// --- What setup created ------------------------------------------------------------------------

/** Per target file: whether setup created it, and which containers (JSON paths) it added. */
export interface CreatedRecord {
  file?: boolean;
  paths?: (string | number)[][];
  /** The separator put before a text block, so --remove takes exactly that back out. */
  prefix?: string;
  /** Array members setup added (e.g. the permission rule), so --remove leaves the user's own. */
  added?: string[];
  /**
   * Codex hook-trust entries setup had Codex write: key (`hooks.state."<key>"` in config.toml)
   * → the trusted_hash written. The keys are positional, so --remove takes an entry out only
   * while it still holds that hash (else it is the user's own hook's by now).
   */
  trustedHashes?: Record<string, string>;
}

export type CreatedState = Record<string, CreatedRecord>;

export function statePath(airlockHome: string): string {
  return join(airlockHome, "setup-state.json");
}

export function readState(airlockHome: string): CreatedState {
  const text = readOrNull(statePath(airlockHome));
  if (text === null) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as CreatedState) : {};
  } catch {
    return {};
  }
}

export function writeState(airlockHome: string, state: CreatedState): void {
  const path = statePath(airlockHome);
  if (Object.keys(state).length === 0) {
    rmSync(path, { force: true });
    return;
  }
  mkdirSync(airlockHome, { recursive: true, mode: 0o700 });
  writeAtomic(path, `${JSON.stringify(state, null, 2)}\n`, true);
}
