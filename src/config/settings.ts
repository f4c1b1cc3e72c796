// Daemon settings resolved from flags, then the environment, then defaults.
import { AirlockError } from "../errors.ts";
import { defaultDbPath } from "./dirs.ts";
import { env } from "./env.ts";

export const DEFAULT_PORT = 27183; // v2's port: every existing client config points here
export const DEFAULT_HOST = "127.0.0.1";

export interface Settings {
  host: string;
  port: number;
  dbPath: string;
  /** True when the user chose the host explicitly (a non-loopback bind needs that). */
  hostExplicit: boolean;
  durability: Durability;
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

export function resolveSettings(flags: { port?: string; host?: string; db?: string; durability?: string }): Settings {
  const portRaw = flags.port ?? env.port;
  const hostFlag = flags.host ?? env.host;
  return {
    port: portRaw === undefined ? DEFAULT_PORT : parsePort(portRaw, flags.port !== undefined ? "--port" : "AIRLOCK_PORT"),
    host: hostFlag ?? DEFAULT_HOST,
    hostExplicit: hostFlag !== undefined,
    dbPath: flags.db ?? defaultDbPath(),
    durability:
      flags.durability !== undefined
        ? parseDurability(flags.durability, "--durability")
        : env.durability !== undefined
          ? parseDurability(env.durability, "AIRLOCK_DURABILITY")
          : DEFAULT_DURABILITY,
  };
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
