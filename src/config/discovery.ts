// Finding the daemon (SPEC §8). A running daemon writes where it listens to ~/.airlock/daemon.json
// (0600, atomically) and removes it when it stops. Everything that needs the daemon — the CLI,
// the hooks (through cli/client.ts rpc), `setup`'s MCP URL, `status`, `doctor` — asks this module,
// in one order:
//   1. what the user chose: --port/--host, else AIRLOCK_SOCKET, AIRLOCK_PORT/AIRLOCK_HOST
//      (authoritative: nothing else is tried, so a call never lands on a daemon nobody asked for);
//   2. daemon.json, when its pid is alive (a file left by kill -9 names a dead pid and is skipped);
//   3. the default socket (~/.airlock/airlock.sock), when the file exists;
//   4. the default port, 127.0.0.1:27183.
// The hot path (a hook on every edit) costs one small file read and a kill(pid, 0): no probe.
// The request itself goes to the first candidate, and a connection that is refused (nothing was
// delivered) falls over to the next. docs/discovery.md has the format and the reasons.
import { closeSync, constants, fstatSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { airlockHome, defaultSocketPath, ensurePrivateDir } from "./dirs.ts";
import { pidNamespace } from "../machine/process.ts";
import { env } from "./env.ts";
import { DEFAULT_HOST, DEFAULT_PORT, parsePort, parseSocket } from "./settings.ts";

export const DAEMON_FILE = "daemon.json";

export function daemonFilePath(home = airlockHome()): string {
  return join(home, DAEMON_FILE);
}

/** What daemon.json holds. Wire names, like the tools': scripts read this file too. */
export interface DaemonRecord {
  /** The file's own format; a reader skips a format it does not know. */
  format: 1;
  pid: number;
  /** The address it binds (as given: 0.0.0.0 for a wildcard). */
  host: string;
  port: number;
  /** Where a client on this machine connects: the bind address made loopback for a wildcard. */
  url: string;
  /** The Unix socket it listens on as well, or null. */
  socket: string | null;
  version: string;
  /** ISO 8601, for people reading the file. */
  started_at: string;
  /** Whether it requires a bearer token. */
  auth: boolean;
  /** Its PID namespace (Linux), so a reader in another namespace does not judge the pid. */
  pid_namespace: string | null;
}

/** The URL a local client uses for a daemon bound to host:port (a wildcard bind answers on loopback). */
export function clientUrl(host: string, port: number): string {
  let h = host.replace(/^\[|\]$/g, "");
  if (h === "0.0.0.0") h = DEFAULT_HOST;
  if (h === "::") h = "::1";
  return `http://${h.includes(":") ? `[${h}]` : h}:${port}`;
}

/** Writes the record atomically (a reader sees the old file or the new one, never half), 0600. */
export function writeDaemonFile(rec: DaemonRecord, path = daemonFilePath()): void {
  ensurePrivateDir(join(path, ".."));
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(rec, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Removes the file if it is still this process's (another daemon may have written it since). */
export function removeDaemonFile(pid = process.pid, path = daemonFilePath()): void {
  if (readDaemonFile(path)?.pid !== pid) return;
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/**
 * The record, or undefined when there is none or it is not one (a reader never throws). A file
 * another user could have written is refused: clients send the bearer token to the URL it names.
 */
export function readDaemonFile(path = daemonFilePath()): DaemonRecord | undefined {
  let raw: string;
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY);
    if (process.platform !== "win32") {
      const st = fstatSync(fd);
      if ((st.mode & 0o022) !== 0 || (process.getuid !== undefined && st.uid !== process.getuid())) return undefined;
    }
    raw = readFileSync(fd, "utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  try {
    const r = JSON.parse(raw) as Partial<DaemonRecord>;
    if (r.format !== 1 || !Number.isInteger(r.pid) || !Number.isInteger(r.port) || typeof r.url !== "string" || !/^http:\/\//.test(r.url)) return undefined;
    return {
      format: 1,
      pid: r.pid!,
      host: typeof r.host === "string" ? r.host : DEFAULT_HOST,
      port: r.port!,
      url: r.url,
      socket: typeof r.socket === "string" ? r.socket : null,
      version: typeof r.version === "string" ? r.version : "?",
      started_at: typeof r.started_at === "string" ? r.started_at : "?",
      auth: r.auth === true,
      pid_namespace: typeof r.pid_namespace === "string" ? r.pid_namespace : null,
    };
  } catch {
    return undefined;
  }
}

/** kill(pid, 0): alive (EPERM too: it exists, it is someone else's). */
export function pidAlive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the record may name a live daemon: its pid is alive, or it lives in another PID
 * namespace (a sandbox sharing the home), where our kill(pid, 0) would judge the wrong process.
 */
export function recordLive(rec: DaemonRecord, ownNamespace: string | null = pidNamespace()): boolean {
  if (rec.pid_namespace !== null && ownNamespace !== null && rec.pid_namespace !== ownNamespace) return true;
  return pidAlive(rec.pid);
}

/** How a candidate was found: what status and doctor tell the user. */
export type Via = "--port" | "--host" | "AIRLOCK_SOCKET" | "AIRLOCK_PORT" | "AIRLOCK_HOST" | "daemon.json" | "default socket" | "default port";

export interface Endpoint {
  /** The request URL: http://host:port, or http://localhost for the socket. */
  url: string;
  /** The Unix socket to send it over, or null for TCP. */
  unix: string | null;
  /** How a message names the place: the URL, or "the socket PATH". */
  where: string;
  via: Via;
  /** Its pid, when daemon.json named it. */
  pid?: number;
  record?: DaemonRecord;
}

export interface Lookup {
  /** Where to send a request, in order. */
  candidates: Endpoint[];
  /** True when the user chose the place (flags or environment): nothing else was listed. */
  explicit: boolean;
  /** The places passed over and why (a stale daemon.json, no socket file): for messages. */
  skipped: string[];
}

export interface LookupOptions {
  /** --port / --host flags. */
  port?: string | undefined;
  host?: string | undefined;
  /** List the implicit places even after an explicit one (doctor, and the hint of a failed call). */
  all?: boolean;
  /** For tests: the airlock home to look in. */
  home?: string;
}

function tcp(host: string, port: number, via: Via): Endpoint {
  const url = clientUrl(host, port);
  return { url, unix: null, where: url, via };
}

function unixEndpoint(path: string, via: Via): Endpoint {
  // Over the socket the Host is only a formality; localhost passes even a strict proxy.
  return { url: "http://localhost/", unix: path, where: `the socket ${path}`, via };
}

/** The places the daemon may be, in the order they are tried (see the header). */
export function lookup(o: LookupOptions = {}): Lookup {
  const explicit: Endpoint[] = [];
  if (o.port !== undefined || o.host !== undefined) {
    // A flag asks for TCP there, whatever the environment says.
    const port = parsePort(o.port ?? env.port ?? DEFAULT_PORT, o.port !== undefined ? "--port" : "AIRLOCK_PORT");
    explicit.push(tcp(o.host ?? env.host ?? DEFAULT_HOST, port, o.port !== undefined ? "--port" : "--host"));
  } else {
    const sock = env.socket === undefined ? null : parseSocket(env.socket);
    if (sock !== null) explicit.push(unixEndpoint(sock, "AIRLOCK_SOCKET"));
    if (env.port !== undefined || env.host !== undefined) {
      explicit.push(tcp(env.host ?? DEFAULT_HOST, parsePort(env.port ?? DEFAULT_PORT, "AIRLOCK_PORT"), env.port !== undefined ? "AIRLOCK_PORT" : "AIRLOCK_HOST"));
    }
  }
  if (explicit.length > 0 && !o.all) return { candidates: explicit, explicit: true, skipped: [] };

  const home = o.home ?? airlockHome();
  const candidates = [...explicit];
  const skipped: string[] = [];
  const file = daemonFilePath(home);
  const rec = readDaemonFile(file);
  if (rec === undefined) skipped.push(`no ${DAEMON_FILE}`);
  else if (!recordLive(rec)) skipped.push(`${DAEMON_FILE} names pid ${rec.pid}, which is gone`);
  else if (!candidates.some((c) => c.unix === null && c.url === rec.url)) {
    candidates.push({ ...tcp(rec.host, rec.port, "daemon.json"), url: rec.url, where: rec.url, pid: rec.pid, record: rec });
  }

  // AIRLOCK_SOCKET=off: the user wants TCP only.
  if (env.socket === undefined && process.platform !== "win32") {
    const sock = o.home !== undefined ? join(home, "airlock.sock") : defaultSocketPath();
    if (isSocket(sock)) {
      if (!candidates.some((c) => c.unix === sock)) candidates.push(unixEndpoint(sock, "default socket"));
    }
    else skipped.push("no socket");
  }
  const def = tcp(DEFAULT_HOST, DEFAULT_PORT, "default port");
  if (!candidates.some((c) => c.unix === null && c.url === def.url)) candidates.push(def);
  return { candidates, explicit: explicit.length > 0, skipped };
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * The URL (with a trailing slash) `setup` writes into a user's MCP entries: the place the user
 * chose (AIRLOCK_HOST/AIRLOCK_PORT), else the running daemon's own (daemon.json: host and port,
 * a wildcard bind made loopback), else the default.
 */
export function discoveredUrl(home?: string): string {
  if (env.port !== undefined || env.host !== undefined) return `${clientUrl(env.host ?? DEFAULT_HOST, parsePort(env.port ?? DEFAULT_PORT, "AIRLOCK_PORT"))}/`;
  const rec = readDaemonFile(daemonFilePath(home));
  if (rec !== undefined && recordLive(rec)) return `${rec.url.replace(/\/$/, "")}/`;
  return `${clientUrl(DEFAULT_HOST, DEFAULT_PORT)}/`;
}

/**
 * The URL a project's (committed) MCP entries get: every teammate's daemon, so the default
 * place, unless the user set AIRLOCK_PORT/AIRLOCK_HOST (a deliberate choice); never the port
 * this one user's daemon happens to run on.
 */
export function projectUrl(): string {
  return `${clientUrl(env.host ?? DEFAULT_HOST, env.port === undefined ? DEFAULT_PORT : parsePort(env.port, "AIRLOCK_PORT"))}/`;
}

/** The port `setup` writes into MCP URLs: the one the user chose, else the running daemon's, else the default. */
export function discoveredPort(home?: string): number {
  if (env.port !== undefined) return parsePort(env.port, "AIRLOCK_PORT");
  const rec = readDaemonFile(daemonFilePath(home));
  if (rec !== undefined && recordLive(rec)) return rec.port;
  return DEFAULT_PORT;
}

/** Connection errors that prove the request never reached a server: safe to try the next place. */
const NOT_DELIVERED = new Set(["ECONNREFUSED", "ENOENT", "ENOTSOCK", "EACCES", "EPERM", "ENOTDIR", "EADDRNOTAVAIL", "ENETUNREACH", "EHOSTUNREACH", "FailedToOpenSocket", "ConnectionRefused"]);

export function notDelivered(err: unknown): boolean {
  return NOT_DELIVERED.has((err as { code?: string }).code ?? "");
}

/** GET /healthz: "ok" when an Airlock answers, another text when something else does, undefined when nothing does. */
export async function probe(ep: Endpoint, timeoutMs = 1500): Promise<string | undefined> {
  try {
    const base = ep.unix ? "http://localhost" : ep.url;
    const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(timeoutMs), ...(ep.unix ? { unix: ep.unix } : {}) });
    const text = (await res.text()).trim();
    return res.ok ? text : `HTTP ${res.status}`;
  } catch (err) {
    if (notDelivered(err)) return undefined;
    return `no answer (${(err as Error).message})`;
  }
}
