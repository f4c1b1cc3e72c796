// How the CLI talks to the running daemon: over its own HTTP API, with the token found for you.
// Inside a sandbox (AIRLOCK_SOCKET set) the same HTTP goes over the mounted Unix socket.
import { DEFAULT_HOST, DEFAULT_PORT, parsePort, parseSocket } from "../config/settings.ts";
import { clientToken } from "../config/token.ts";
import { env } from "../config/env.ts";
import { AirlockError, errorMessage } from "../errors.ts";

export interface ClientOptions {
  port?: string | undefined;
  host?: string | undefined;
}

export function daemonUrl(o: ClientOptions = {}): string {
  const port = parsePort(o.port ?? env.port ?? DEFAULT_PORT, o.port ? "--port" : "AIRLOCK_PORT");
  let host = o.host ?? env.host ?? DEFAULT_HOST;
  if (host === "0.0.0.0") host = DEFAULT_HOST;
  if (host === "::") host = "::1";
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * The Unix socket the CLI should use, or null for TCP: AIRLOCK_SOCKET when it is set (and not
 * "off"), unless a --port or --host flag asks for TCP explicitly.
 */
export function daemonSocket(o: ClientOptions = {}): string | null {
  if (o.port !== undefined || o.host !== undefined || env.socket === undefined) return null;
  return parseSocket(env.socket);
}

/** Where rpc() sends its requests, and how to name that place in a message. */
export function daemonEndpoint(o: ClientOptions = {}): { url: string; unix: string | null; where: string } {
  const unix = daemonSocket(o);
  // Over the socket the Host is only a formality; localhost passes even a strict proxy.
  if (unix) return { url: "http://localhost/", unix, where: `the socket ${unix}` };
  const url = daemonUrl(o);
  return { url, unix: null, where: url };
}

let rpcId = 0;

/** One JSON-RPC call; throws AirlockError("unavailable") when nothing answers, "internal" when it answered an error. */
export async function rpc(method: string, params: unknown, o: ClientOptions = {}, timeoutMs = 65_000): Promise<unknown> {
  const { url, unix, where } = daemonEndpoint(o);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const token = clientToken();
  if (token) headers.authorization = `Bearer ${token}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
      ...(unix ? { unix } : {}),
    });
  } catch (err) {
    const hint = unix ? "start one with `airlock daemon` on the host and mount its socket here" : "start one with `airlock daemon`";
    throw new AirlockError("unavailable", `no Airlock daemon answers at ${where} (${errorMessage(err)}); ${hint}`);
  }
  const text = await res.text();
  // It answered: whatever went wrong, a daemon is there (only "unavailable" means none is).
  if (res.status !== 200) throw new AirlockError("internal", `the daemon at ${where} answered ${res.status}: ${text.trim()}`);
  const body = JSON.parse(text) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new AirlockError("internal", body.error.message);
  return body.result;
}

/** Calls a tool and returns its parsed JSON result (tool errors included, as {error}). */
export async function callTool(name: string, args: Record<string, unknown>, o: ClientOptions = {}): Promise<{ value: unknown; isError: boolean }> {
  const r = (await rpc("tools/call", { name, arguments: args }, o)) as { content: { text: string }[]; isError?: boolean };
  return { value: JSON.parse(r.content[0]!.text), isError: r.isError === true };
}

/** The --port flag every command that talks to the daemon takes. */
export const PORT_ARG = { type: "string", description: "Daemon port (default 27183 or AIRLOCK_PORT)" } as const;
