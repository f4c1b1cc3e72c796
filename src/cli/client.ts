// How the CLI talks to the running daemon: over its own HTTP API, with the token found for you.
// Where the daemon is comes from config/discovery.ts (flags, the environment, daemon.json, the
// default socket, the default port); inside a sandbox (AIRLOCK_SOCKET set) the same HTTP goes
// over the mounted Unix socket.
import { daemonFilePath, type Endpoint, lookup, type Lookup, notDelivered, type Via } from "../config/discovery.ts";
import { clientToken } from "../config/token.ts";
import { AirlockError, errorMessage } from "../errors.ts";
import { VERSION } from "../version.ts";

const USER_AGENT = `airlock/${VERSION} (cli)`;

export interface ClientOptions {
  port?: string | undefined;
  host?: string | undefined;
  /** Exactly this place, no lookup (doctor asks the daemon it found). */
  endpoint?: Endpoint | undefined;
}

/**
 * The daemon's TCP URL (what a browser or an MCP config needs), from the one lookup: the first TCP
 * place in it, as the user chose it or as found in daemon.json (no probe), else the default. A
 * choice with no TCP place in it (AIRLOCK_SOCKET alone) says nothing of the port: then the places
 * the lookup lists after it (daemon.json, the default port) do.
 */
export function daemonUrl(o: ClientOptions = {}): string {
  const tcp = (l: Lookup) => l.candidates.find((c) => c.unix === null);
  return (tcp(lookup(o)) ?? tcp(lookup({ ...o, all: true })))!.url;
}

// One lookup per process and options: a hook makes two or three calls, each would read the file.
const lookups = new Map<string, { lookup: Lookup; answered?: Endpoint }>();

function key(o: ClientOptions): string {
  return `${o.port ?? ""}\0${o.host ?? ""}`;
}

function cached(o: ClientOptions): { lookup: Lookup; answered?: Endpoint } {
  if (o.endpoint) return { lookup: { candidates: [o.endpoint], explicit: true, skipped: [] } };
  let c = lookups.get(key(o));
  if (!c) lookups.set(key(o), (c = { lookup: lookup(o) }));
  return c;
}

/** The first place rpc() sends to, and how to name it in a message. */
export function daemonEndpoint(o: ClientOptions = {}): Endpoint {
  const c = cached(o);
  return c.answered ?? c.lookup.candidates[0]!;
}

/** Names a list of places: "A", "A or B", "A, B or C". */
export function places(eps: Endpoint[]): string {
  const w = eps.map((e) => e.where);
  return w.length <= 1 ? (w[0] ?? "") : `${w.slice(0, -1).join(", ")} or ${w.at(-1)}`;
}

/** When the user's choice answers nothing but daemon.json names a live daemon, say where it is. */
function elsewhereHint(l: Lookup, o: ClientOptions): string | undefined {
  if (!l.explicit || o.endpoint) return undefined;
  const found = lookup({ ...o, all: true }).candidates.find((c) => c.via === "daemon.json");
  if (!found?.record) return undefined;
  const chose = o.port !== undefined ? "--port" : o.host !== undefined ? "--host" : [...new Set(l.candidates.map((c) => c.via))].join(" and ");
  return `${daemonFilePath()} says a daemon (pid ${found.pid}) runs at ${found.url}: drop ${chose}, or set it to port ${found.record.port}`;
}

/** Where the daemon that answered runs, for people (status's head line) and scripts (--json). */
export interface DaemonPlace {
  url: string | null;
  socket: string | null;
  pid: number | null;
  found_by: Via;
}

const FOUND_BY: Record<Via, string> = {
  "--port": "--port",
  "--host": "--host",
  AIRLOCK_SOCKET: "AIRLOCK_SOCKET",
  AIRLOCK_PORT: "AIRLOCK_PORT",
  AIRLOCK_HOST: "AIRLOCK_HOST",
  "daemon.json": "daemon.json",
  "default socket": "the default socket",
  "default port": "the default port",
};

export function describePlace(p: DaemonPlace): string {
  const at = p.url !== null ? p.url.replace(/^http:\/\//, "") : `socket ${p.socket}`;
  return `${at} (${p.pid !== null ? `pid ${p.pid}, ` : ""}found by ${FOUND_BY[p.found_by]})`;
}

let rpcId = 0;

/** What post() sends besides the body: extra headers (the modern era's routing headers), and a signal. */
export interface PostOptions extends ClientOptions {
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  userAgent?: string | undefined;
}

/**
 * POSTs one JSON-RPC body to the daemon, and where it was answered. A place that refuses the
 * connection (nothing was delivered) passes the body to the next place; anything else — an
 * answer, a timeout, an abort — ends it. Throws AirlockError("unavailable") when nothing answers,
 * naming the places tried and how to start a daemon. The token is read on every call: a daemon
 * that comes up later writes it then.
 */
export async function post(body: string, o: PostOptions = {}): Promise<{ res: Response; endpoint: Endpoint }> {
  const c = cached(o);
  const order = c.answered ? [c.answered, ...c.lookup.candidates.filter((e) => e !== c.answered)] : c.lookup.candidates;
  // The daemon's per-client era counts (airlock/status eras_by_client) name us, not the runtime.
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": o.userAgent ?? USER_AGENT, ...o.headers };
  const token = clientToken();
  if (token) headers.authorization = `Bearer ${token}`;
  let lastErr: unknown;
  const tried: Endpoint[] = [];
  for (const ep of order) {
    tried.push(ep);
    try {
      const res = await fetch(ep.url, { method: "POST", headers, body, signal: o.signal, ...(ep.unix ? { unix: ep.unix } : {}) });
      c.answered = ep;
      return { res, endpoint: ep };
    } catch (err) {
      lastErr = err;
      // A timeout or a reset may have reached a daemon: never send the call a second time.
      if (!notDelivered(err)) break;
    }
  }
  // The next call looks again: the daemon may come back elsewhere (a restart on another port).
  lookups.delete(key(o));
  const sandbox = c.lookup.candidates.some((e) => e.via === "AIRLOCK_SOCKET");
  const hint = elsewhereHint(c.lookup, o) ?? (sandbox ? "start one with `airlock daemon` on the host and mount its socket here" : "start one with `airlock daemon`");
  throw new AirlockError("unavailable", `no Airlock daemon answers at ${places(tried)} (${errorMessage(lastErr)}); ${hint}`, {
    places: places(tried),
    skipped: c.lookup.skipped,
  });
}

/**
 * One JSON-RPC call, and where it was answered (post() finds the place).
 * Throws AirlockError("unavailable") when nothing answers, "internal" when it answered an error.
 */
export async function rpcAt(method: string, params: unknown, o: ClientOptions = {}, timeoutMs = 65_000): Promise<{ result: unknown; endpoint: Endpoint }> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params });
  const { res, endpoint } = await post(body, { ...o, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  const where = endpoint.where;
  // It answered: whatever went wrong, a daemon is there (only "unavailable" means none is).
  if (res.status !== 200) throw new AirlockError("internal", `the daemon at ${where} answered ${res.status}: ${text.trim()}`);
  const parsed = JSON.parse(text) as { result?: unknown; error?: { message: string } };
  if (parsed.error) throw new AirlockError("internal", parsed.error.message);
  return { result: parsed.result, endpoint };
}

/** One JSON-RPC call; throws AirlockError("unavailable") when nothing answers, "internal" when it answered an error. */
export async function rpc(method: string, params: unknown, o: ClientOptions = {}, timeoutMs = 65_000): Promise<unknown> {
  return (await rpcAt(method, params, o, timeoutMs)).result;
}

/** Calls a tool and returns its parsed JSON result (tool errors included, as {error}). */
export async function callTool(name: string, args: Record<string, unknown>, o: ClientOptions = {}): Promise<{ value: unknown; isError: boolean }> {
  const r = (await rpc("tools/call", { name, arguments: args }, o)) as { content: { text: string }[]; isError?: boolean };
  return { value: JSON.parse(r.content[0]!.text), isError: r.isError === true };
}

/** The --port flag every command that talks to the daemon takes. */
export const PORT_ARG = { type: "string", description: "Daemon port (default: AIRLOCK_PORT, else the running daemon's, else 27183)" } as const;
