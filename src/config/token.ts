// The bearer token. On Linux (and any multi-user host) loopback is shared by every user, so it
// is no authorization boundary: a token is generated on first start into ~/.airlock/token
// (0600, 64 hex chars). AIRLOCK_TOKEN overrides. A token file that is empty, unreadable or
// readable by others is refused, never taken as "auth off". On macOS it stays optional, as in v2.
import { existsSync, openSync, readFileSync, statSync, writeSync, closeSync, constants } from "node:fs";
import { AirlockError, errorMessage } from "../errors.ts";
import { ensureParentDir, tokenPath } from "./dirs.ts";
import { env } from "./env.ts";

export interface TokenOptions {
  platform?: NodeJS.Platform;
  path?: string;
  /** A non-loopback bind makes the token mandatory on every platform. */
  required?: boolean;
}

export function generateToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");
}

/** Reads the token file, refusing one that is empty or open to group or others. */
export function readTokenFile(path: string): string {
  let mode: number;
  let raw: string;
  try {
    mode = statSync(path).mode;
    raw = readFileSync(path, "utf8");
  } catch (err) {
    throw new AirlockError("config", `cannot read the token file ${path}: ${errorMessage(err)}. Fix its permissions (chmod 600 ${path}) or delete it to have a new one generated.`);
  }
  if ((mode & 0o077) !== 0) {
    throw new AirlockError(
      "config",
      `the token file ${path} is readable by other users (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${path}`,
    );
  }
  const token = raw.trim();
  if (token === "") {
    throw new AirlockError("config", `the token file ${path} is empty; delete it to have a new one generated, or put a token in it`);
  }
  return token;
}

/** The token the daemon requires, or undefined when auth is off (macOS without a token). */
export function resolveToken(opts: TokenOptions = {}): string | undefined {
  if (env.token !== undefined) return env.token;
  const path = opts.path ?? tokenPath();
  if (existsSync(path)) return readTokenFile(path);
  const platform = opts.platform ?? process.platform;
  if (platform === "darwin" && !opts.required) return undefined;
  ensureParentDir(path);
  const token = generateToken();
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (err) {
    // Another airlock wrote it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return readTokenFile(path);
    throw new AirlockError("config", `cannot create the token file ${path}: ${errorMessage(err)}`);
  }
  try {
    writeSync(fd, `${token}\n`);
  } finally {
    closeSync(fd);
  }
  return token;
}

/** The token a client should send: AIRLOCK_TOKEN, else the token file if there is one. */
export function clientToken(path = tokenPath()): string | undefined {
  if (env.token !== undefined) return env.token;
  if (!existsSync(path)) return undefined;
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}
