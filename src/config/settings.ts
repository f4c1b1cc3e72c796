// Daemon settings resolved from flags, then the environment, then defaults.
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { AirlockError } from "../errors.ts";
import { defaultDbPath, defaultSocketPath } from "./dirs.ts";
import { env } from "./env.ts";

export const DEFAULT_PORT = 27183; // v2's port: every existing client config points here
export const DEFAULT_HOST = "127.0.0.1";

export interface Settings {
  host: string;
  port: number;
  dbPath: string;
  /**
   * A PostgreSQL URL when the state lives in a database shared with other daemons (--store,
   * AIRLOCK_STORE, or the file AIRLOCK_STORE_FILE names); undefined for the SQLite file dbPath.
   * It may hold a password: never log it as is (redactUrl).
   */
  store: string | undefined;
  /** True when the user chose the host explicitly (a non-loopback bind needs that). */
  hostExplicit: boolean;
  durability: Durability;
  /** The Unix socket to listen on as well (for sandboxes), or null when it is off. */
  socket: string | null;
  /** True when the user chose the socket (then failing to listen on it is fatal). */
  socketExplicit: boolean;
  /** Journal retention: entries older than this many days, or beyond this many, are trimmed (unset: the journal's defaults, 7 days and 100,000). */
  journalDays: number | undefined;
  journalMax: number | undefined;
  /** A shared store: how long a machine may have no live daemon before its bound slots go (unset: 10 min). */
  hostGoneSeconds: number | undefined;
}

/** A positive number from the environment (journal retention), or undefined when unset. */
export function parsePositive(raw: string | undefined, source: string, integer: boolean): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n > 0) || (integer && !Number.isInteger(n))) {
    throw new AirlockError("config", `${source} must be a positive ${integer ? "whole " : ""}number (got ${JSON.stringify(raw)})`);
  }
  return n;
}

/** full: every answer waits for its fsync (group commit); normal: survives a daemon crash, not a power loss. */
export const DURABILITY_MODES = ["normal", "full"] as const;
export type Durability = (typeof DURABILITY_MODES)[number];
export const DEFAULT_DURABILITY: Durability = "full";

export function parseDurability(raw: string, source: string): Durability {
  const v = raw.trim().toLowerCase();
  if (!(DURABILITY_MODES as readonly string[]).includes(v)) {
    throw new AirlockError("config", `${source} must be one of ${DURABILITY_MODES.join(", ")} (got ${JSON.stringify(raw)})`);
  }
  return v as Durability;
}

export function parsePort(raw: string | number, source: string): number {
  // Decimal digits only: Number() would take "" (and " ") as 0, a random port, and "0x50" as 80.
  const n = typeof raw === "number" ? raw : /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new AirlockError("config", `${source} must be a port number from 0 to 65535 (got ${JSON.stringify(raw)})`);
  }
  return n;
}

/** The word that turns the socket off, in --socket and AIRLOCK_SOCKET. */
export const SOCKET_OFF = "off";

/**
 * A socket setting as given (--socket or AIRLOCK_SOCKET): an absolute path, or null for "off"
 * (and for an empty --socket ''). A relative path is taken from the current directory.
 */
export function parseSocket(raw: string): string | null {
  const v = raw.trim();
  if (v === "" || v.toLowerCase() === SOCKET_OFF) return null;
  return resolve(v);
}

export interface SettingsFlags {
  port?: string | undefined;
  host?: string | undefined;
  db?: string | undefined;
  store?: string | undefined;
  durability?: string | undefined;
  /** A path, or "off"/"" to listen on TCP only. */
  socket?: string | undefined;
}

export function resolveSettings(flags: SettingsFlags): Settings {
  const portRaw = flags.port ?? env.port;
  const hostFlag = flags.host ?? env.host;
  const socketRaw = flags.socket ?? env.socket;
  return {
    port: portRaw === undefined ? DEFAULT_PORT : parsePort(portRaw, flags.port !== undefined ? "--port" : "AIRLOCK_PORT"),
    host: hostFlag ?? DEFAULT_HOST,
    hostExplicit: hostFlag !== undefined,
    dbPath: flags.db ?? defaultDbPath(),
    store: resolveStore(flags),
    durability:
      flags.durability !== undefined
        ? parseDurability(flags.durability, "--durability")
        : env.durability !== undefined
          ? parseDurability(env.durability, "AIRLOCK_DURABILITY")
          : DEFAULT_DURABILITY,
    socket: socketRaw !== undefined ? parseSocket(socketRaw) : process.platform === "win32" ? null : defaultSocketPath(),
    socketExplicit: socketRaw !== undefined,
    journalDays: parsePositive(env.journalDays, "AIRLOCK_JOURNAL_DAYS", false),
    journalMax: parsePositive(env.journalMax, "AIRLOCK_JOURNAL_MAX", true),
    hostGoneSeconds: parsePositive(env.hostGoneSeconds, "AIRLOCK_HOST_GONE_SECONDS", false),
  };
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** The shared store's URL: --store, else AIRLOCK_STORE, else the contents of AIRLOCK_STORE_FILE. */
export function resolveStore(flags: Pick<SettingsFlags, "store" | "db">): string | undefined {
  let url: string | undefined;
  let source: string;
  if (flags.store !== undefined) [url, source] = [flags.store.trim(), "--store"];
  else if (env.store !== undefined) [url, source] = [env.store.trim(), "AIRLOCK_STORE"];
  else if (env.storeFile !== undefined) [url, source] = [readStoreFile(env.storeFile), `AIRLOCK_STORE_FILE (${env.storeFile})`];
  else return undefined;
  if (url === "" || url.toLowerCase() === "sqlite") return undefined; // the embedded default, said explicitly
  if (flags.db !== undefined) throw new AirlockError("config", `--db and ${source} both choose where the state lives; give one`);
  // The message never repeats the value: it may carry a password.
  if (!POSTGRES_URL.test(url)) throw new AirlockError("config", `${source} must be a postgres:// or postgresql:// URL (or "sqlite")`);
  return url;
}

/** The URL in a store file, refusing a file other users can read (the daemon's own rule). */
export function readStoreFile(path: string): string {
  try {
    // Readable by others, the file gives the database password away: refuse it, as ssh does a key.
    if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) {
      throw new AirlockError("config", `AIRLOCK_STORE_FILE ${path} is readable by other users; chmod 600 it`);
    }
    return readFileSync(path, "utf8").trim();
  } catch (err) {
    if (err instanceof AirlockError) throw err;
    throw new AirlockError("config", `cannot read AIRLOCK_STORE_FILE ${path}: ${(err as Error).message}`);
  }
}

/**
 * The Host names a daemon bound to `host` answers besides localhost, 127.0.0.1 and [::1]: the
 * bound address itself, and for a wildcard bind (0.0.0.0, ::) every address of this machine and
 * its host name, or no client beyond loopback could reach it. (Beyond loopback a token is
 * mandatory anyway; the Host check stays as the DNS-rebinding defence.)
 */
export function boundHostNames(host: string, machine: { addresses: string[]; hostname: string }): string[] {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "0.0.0.0" || h === "::") return [...machine.addresses.map((a) => a.toLowerCase()), machine.hostname.toLowerCase()];
  return [h];
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}
