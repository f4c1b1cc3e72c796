// Where Airlock keeps its files: ~/.airlock (or $AIRLOCK_HOME), created 0700.
import { chmodSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { env } from "./env.ts";

export function airlockHome(): string {
  return env.home ?? join(env.userHome ?? homedir(), ".airlock");
}

export function defaultDbPath(): string {
  return env.db ?? join(airlockHome(), "state.db");
}

/** Where the daemon's Unix socket lives by default: next to the token, in the 0700 home. */
export function defaultSocketPath(): string {
  return join(airlockHome(), "airlock.sock");
}

export function tokenPath(): string {
  return join(airlockHome(), "token");
}

/** Creates a private directory (0700) if it is missing and tightens it if it exists. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch {
    // Not ours to tighten (e.g. a shared parent given by --db): leave it as the user made it.
  }
}

export function ensureParentDir(file: string): void {
  ensurePrivateDir(dirname(file));
}
