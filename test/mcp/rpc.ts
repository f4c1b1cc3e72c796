// Calls the HTTP app through its fetch handler (no port): a request builder with the headers a
// well-behaved client sends, and shortcuts for JSON-RPC and tools/call.
import { expect } from "bun:test";
import { createApp, type App } from "../../src/mcp/server.ts";
import { makeKernel, type TestKernel } from "../helpers/kernel.ts";

export const TOKEN = "t0k";
export const URL_ROOT = "http://127.0.0.1:27183/";

export interface TestApp extends TestKernel {
  app: App;
  /** Sends one request; headers given as null are left out. */
  send(opts?: SendOptions): Promise<Response>;
  /** One JSON-RPC request; answers the parsed body after checking HTTP 200 and JSON. */
  rpc(method: string, params?: unknown, id?: unknown): Promise<RpcBody>;
  /** tools/call; answers the whole MCP result. */
  callRaw(name: string, args?: unknown): Promise<ToolResult>;
  /** tools/call; answers the parsed JSON of the single text content. */
  call(name: string, args?: unknown): Promise<any>;
  /** tools/call expected to fail: answers the error message after checking isError. */
  callError(name: string, args?: unknown): Promise<string>;
}

export interface SendOptions {
  path?: string;
  method?: string;
  headers?: Record<string, string | null>;
  body?: string | ArrayBuffer | Uint8Array | ReadableStream<Uint8Array> | null;
  signal?: AbortSignal;
}

export interface RpcBody {
  jsonrpc: "2.0";
  id: unknown;
  result?: any;
  error?: { code: number; message: string };
}

export interface ToolResult {
  content: { type: string; text: string }[];
  isError?: boolean;
}

export const GOOD_HEADERS: Record<string, string> = {
  host: "127.0.0.1:27183",
  "content-type": "application/json",
  authorization: `Bearer ${TOKEN}`,
};

/** The parsed JSON body of a response (tests inspect it freely). */
export async function json(res: Response): Promise<any> {
  return await res.json();
}

/** Lets the event loop run until cond holds (a call reached its wait), failing after 5 s (a
 *  budget a loaded machine holds; it takes a few turns of the loop). */
export async function until(cond: () => boolean | Promise<boolean>, what = "condition"): Promise<void> {
  const deadline = performance.now() + 5000;
  for (let i = 0; i < 20 || performance.now() < deadline; i++) {
    const ok = cond();
    if (ok instanceof Promise ? await ok : ok) return;
    await Bun.sleep(i < 20 ? 0 : 5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Whether a promise has settled, without waiting for it. */
export async function isSettled(p: Promise<unknown>): Promise<boolean> {
  const marker = Symbol("pending");
  const r = await Promise.race([p.then(() => true, () => true), Bun.sleep(5).then(() => marker)]);
  return r !== marker;
}

export async function makeApp(opts: { token?: string | undefined; noToken?: boolean } = {}): Promise<TestApp> {
  const tk = await makeKernel();
  const app = createApp({ kernel: tk.kernel, token: opts.noToken ? undefined : (opts.token ?? TOKEN) });

  async function send(o: SendOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...GOOD_HEADERS, ...o.headers })) if (v !== null && v !== undefined) headers[k] = v;
    const method = o.method ?? "POST";
    const init: RequestInit = { method, headers };
    if (o.signal) init.signal = o.signal;
    if (method !== "GET" && method !== "HEAD" && o.body !== null) init.body = o.body ?? "{}";
    return app.fetch(new Request(new URL(o.path ?? "/", URL_ROOT).href, init));
  }

  async function rpc(method: string, params?: unknown, id: unknown = 1): Promise<RpcBody> {
    const msg: Record<string, unknown> = { jsonrpc: "2.0", id, method };
    if (params !== undefined) msg.params = params;
    const res = await send({ body: JSON.stringify(msg) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    return (await res.json()) as RpcBody;
  }

  async function callRaw(name: string, args?: unknown): Promise<ToolResult> {
    const params: Record<string, unknown> = { name };
    if (args !== undefined) params.arguments = args;
    const body = await rpc("tools/call", params);
    expect(body.error).toBeUndefined();
    const result = body.result as ToolResult;
    expect(result.content).toHaveLength(1);
    expect(result.content[0]!.type).toBe("text");
    return result;
  }

  async function call(name: string, args?: unknown): Promise<any> {
    const r = await callRaw(name, args);
    const value = JSON.parse(r.content[0]!.text);
    if (r.isError) throw new Error(`${name} failed unexpectedly: ${r.content[0]!.text}`);
    expect("isError" in r).toBe(false);
    return value;
  }

  async function callError(name: string, args?: unknown): Promise<string> {
    const r = await callRaw(name, args);
    expect(r.isError).toBe(true);
    const value = JSON.parse(r.content[0]!.text);
    expect(Object.keys(value)).toEqual(["error"]);
    expect(typeof value.error).toBe("string");
    return value.error as string;
  }

  return { ...tk, app, send, rpc, callRaw, call, callError };
}
