// How the CLI talks to the running daemon: over its own HTTP API, with the token found for you.
import { DEFAULT_HOST, DEFAULT_PORT, parsePort } from "../config/settings.ts";
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

let rpcId = 0;

/** One JSON-RPC call; throws AirlockError("unavailable") when nothing answers, "internal" when it answered an error. */
export async function rpc(method: string, params: unknown, o: ClientOptions = {}, timeoutMs = 65_000): Promise<unknown> {
  const url = daemonUrl(o);
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
    });
  } catch (err) {
    throw new AirlockError("unavailable", `no Airlock daemon answers at ${url} (${errorMessage(err)}); start one with \`airlock daemon\``);
  }
  const text = await res.text();
  // It answered: whatever went wrong, a daemon is there (only "unavailable" means none is).
  if (res.status !== 200) throw new AirlockError("internal", `the daemon at ${url} answered ${res.status}: ${text.trim()}`);
  const body = JSON.parse(text) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new AirlockError("internal", body.error.message);
  return body.result;
}

/** Calls a tool and returns its parsed JSON result (tool errors included, as {error}). */
export async function callTool(name: string, args: Record<string, unknown>, o: ClientOptions = {}): Promise<{ value: unknown; isError: boolean }> {
  const r = (await rpc("tools/call", { name, arguments: args }, o)) as { content: { text: string }[]; isError?: boolean };
  return { value: JSON.parse(r.content[0]!.text), isError: r.isError === true };
}
