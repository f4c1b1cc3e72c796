// A real daemon process over real HTTP. It runs the source (`bun src/main.ts`) or, when
// AIRLOCK_BIN names one, the compiled binary, so the same e2e suite covers both. With
// AIRLOCK_TEST_STORE=postgres (and AIRLOCK_TEST_PG naming a server), every daemon keeps its
// state in a fresh PostgreSQL database instead of a SQLite file: the same suite covers both
// stores. Its `db` is then that database's URL, and a restart on it reuses the database.
import { afterAll, beforeAll, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { freshDatabase, PG_URL } from "./pg.ts";

/** True when the e2e daemons keep their state in PostgreSQL (AIRLOCK_TEST_STORE=postgres). */
export const ON_POSTGRES = process.env.AIRLOCK_TEST_STORE === "postgres";
if (ON_POSTGRES && !PG_URL) throw new Error("AIRLOCK_TEST_STORE=postgres needs AIRLOCK_TEST_PG (a server URL, e.g. from .ci/pg.sh start)");
/** What only the SQLite store has (its file, read offline by status and doctor): skipped on PostgreSQL. */
export const sqliteOnly = ON_POSTGRES ? test.skip : test;

export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = process.execPath;

export function daemonCommand(): string[] {
  const bin = process.env.AIRLOCK_BIN;
  return bin ? [resolve(bin)] : [BUN, join(ROOT, "src/main.ts")];
}

export interface DaemonProcess {
  url: string;
  port: number;
  home: string;
  db: string;
  token: string | undefined;
  /** The Unix socket it listens on as well (from its "listening on" line), or null. */
  socket: string | null;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  output(): string;
  /** JSON-RPC call; returns the parsed response body. */
  rpc(method: string, params?: unknown, init?: { signal?: AbortSignal; headers?: Record<string, string> }): Promise<any>;
  /** tools/call; returns the tool's parsed JSON result (with isError set on errors). */
  call(name: string, args?: Record<string, unknown>, init?: { signal?: AbortSignal }): Promise<any>;
  post(body: string, headers?: Record<string, string>, init?: { signal?: AbortSignal }): Promise<Response>;
  /** post, rpc and call over the Unix socket (same headers and token). */
  postSocket(body: string, headers?: Record<string, string>, init?: { signal?: AbortSignal }): Promise<Response>;
  rpcSocket(method: string, params?: unknown, init?: { signal?: AbortSignal; headers?: Record<string, string> }): Promise<any>;
  callSocket(name: string, args?: Record<string, unknown>, init?: { signal?: AbortSignal }): Promise<any>;
  kill(signal?: NodeJS.Signals | number): Promise<number | null>;
}

export interface StartOptions {
  home?: string;
  db?: string;
  port?: number;
  /** --socket PATH (or "off"); without it the daemon uses <home>/airlock.sock. */
  socket?: string;
  args?: string[];
  env?: Record<string, string | undefined>;
  /** How long to wait for "listening on" (ms). */
  timeoutMs?: number;
}

// Every daemon a test file starts; a safety net kills the ones a failed test left running,
// so no stray daemon outlives the test process.
const running = new Set<Subprocess>();
process.on("exit", () => {
  for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill(9);
});

/** How long kill() waits for a graceful exit before it sends SIGKILL. */
const KILL_GRACE_MS = 5000;

export function tempHome(): string {
  return join(mkdtempSync(join(tmpdir(), "airlock-e2e-")), ".airlock");
}

/** Starts a daemon (port 0 by default) and resolves once it listens. */
export async function startDaemon(o: StartOptions = {}): Promise<DaemonProcess> {
  const home = o.home ?? tempHome();
  const db = o.db ?? (ON_POSTGRES ? (await freshDatabase()).url : join(home, "state.db"));
  const where = /^postgres(ql)?:/.test(db) ? ["--store", db] : ["--db", db];
  const proc = Bun.spawn([...daemonCommand(), "daemon", "--port", String(o.port ?? 0), ...where, ...(o.socket !== undefined ? ["--socket", o.socket] : []), ...(o.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, AIRLOCK_HOME: home, AIRLOCK_LOG: "info", ...o.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  let out = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk);
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  const deadline = Date.now() + (o.timeoutMs ?? 15_000);
  let url: string | undefined;
  while (!url) {
    const m = /listening on (http:\/\/\S+?:\d+)/.exec(out);
    if (m) url = m[1];
    else if (proc.exitCode !== null) throw new Error(`daemon exited with ${proc.exitCode}:\n${out}`);
    else if (Date.now() > deadline) {
      proc.kill(9);
      throw new Error(`daemon did not start in time:\n${out}`);
    } else await Bun.sleep(10);
  }
  let token: string | undefined = o.env?.AIRLOCK_TOKEN;
  if (token === undefined) {
    try {
      token = readFileSync(join(home, "token"), "utf8").trim();
    } catch {
      token = undefined;
    }
  }
  const headers = (): Record<string, string> => ({
    "content-type": "application/json",
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  });
  const socket = /listening on http:\S+ \(socket (\S+),/.exec(out)?.[1] ?? null;
  let id = 0;
  const parse = async (res: Response) => {
    const text = await res.text();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text}`);
    return JSON.parse(text);
  };
  const result = (body: any) => {
    if (body.error) throw new Error(`rpc error: ${JSON.stringify(body.error)}`);
    const value = JSON.parse(body.result.content[0].text);
    if (body.result.isError) Object.defineProperty(value, "isError", { value: true, enumerable: false });
    return value;
  };
  const d: DaemonProcess = {
    url,
    port: Number(/:(\d+)$/.exec(url)![1]),
    home,
    db,
    token,
    socket,
    proc: proc as Subprocess<"ignore", "pipe", "pipe">,
    output: () => out,
    post: (body, extra = {}, init = {}) => fetch(url!, { method: "POST", headers: { ...headers(), ...extra }, body, signal: init.signal }),
    postSocket(body, extra = {}, init = {}) {
      if (!socket) throw new Error("this daemon listens on no socket");
      return fetch("http://localhost/", { method: "POST", headers: { ...headers(), ...extra }, body, signal: init.signal, unix: socket });
    },
    async rpc(method, params, init = {}) {
      return parse(await d.post(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }), init.headers ?? {}, init));
    },
    async rpcSocket(method, params, init = {}) {
      return parse(await d.postSocket(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }), init.headers ?? {}, init));
    },
    async call(name, args = {}, init = {}) {
      return result(await d.rpc("tools/call", { name, arguments: args }, init));
    },
    async callSocket(name, args = {}, init = {}) {
      return result(await d.rpcSocket("tools/call", { name, arguments: args }, init));
    },
    async kill(signal = "SIGTERM") {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill(9), KILL_GRACE_MS);
      try {
        return await proc.exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  return d;
}

/** Runs the CLI (source or binary) to completion. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 30_000) {
  const proc = Bun.spawn([...daemonCommand(), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(9), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

/** One daemon for the whole file: started before its tests, killed after them. */
export function useDaemon(o: StartOptions = {}): DaemonProcess {
  let current: DaemonProcess | undefined;
  beforeAll(async () => {
    current = await startDaemon(o);
  });
  afterAll(async () => {
    await current?.kill();
  });
  return new Proxy({} as DaemonProcess, {
    get(_t, key) {
      if (!current) throw new Error("useDaemon: used outside a test");
      const v = (current as unknown as Record<PropertyKey, unknown>)[key];
      return typeof v === "function" ? v.bind(current) : v;
    },
  });
}

/** The environment that points the CLI at a daemon (read when used, so a useDaemon() proxy works). */
/**
 * Runs `airlock hook CLIENT EVENT` (source or binary) as a client runs it: `stdin` written as JSON
 * (a string as it is) and closed, or left open when null; killed after 20 s.
 */
export async function runHook(client: string, event: string, stdin: unknown, env: Record<string, string | undefined>) {
  const started = Date.now();
  const proc = Bun.spawn([...daemonCommand(), "hook", client, event], { cwd: ROOT, env: { ...process.env, ...env }, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  if (stdin !== null) {
    proc.stdin.write(typeof stdin === "string" ? stdin : JSON.stringify(stdin));
    await proc.stdin.end();
  }
  const killer = setTimeout(() => proc.kill(9), 20_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  return { stdout, stderr, code, ms: Date.now() - started };
}

export function cliEnv(d: DaemonProcess): Record<string, string> {
  return {
    get AIRLOCK_HOME() {
      return d.home;
    },
    get AIRLOCK_PORT() {
      return String(d.port);
    },
  } as Record<string, string>;
}

/** Daemons started on demand by this file's tests; every one is killed (SIGKILL) after them. */
export function useDaemonStarter(): (o?: StartOptions) => Promise<DaemonProcess> {
  const started: DaemonProcess[] = [];
  afterAll(async () => {
    for (const d of started) await d.kill(9);
  });
  return async (o = {}) => {
    const d = await startDaemon(o);
    started.push(d);
    return d;
  };
}

/**
 * Runs one statement (SQLite's `?` placeholders) on a daemon's store behind its back, whichever
 * store it is: what a test does to stand in for time passing or for an outside reader.
 */
export async function storeQuery<R = Record<string, unknown>>(db: string, sql: string, ...args: (string | number | null)[]): Promise<R[]> {
  if (/^postgres(ql)?:/.test(db)) {
    const { SQL } = await import("bun");
    const conn = new SQL(db, { max: 1 });
    try {
      let n = 0;
      return (await conn.unsafe(sql.replace(/\?/g, () => `$${++n}`), args)) as R[];
    } finally {
      await conn.close();
    }
  }
  const { Database } = await import("bun:sqlite");
  const conn = new Database(db);
  try {
    conn.exec("PRAGMA busy_timeout = 5000"); // the daemon may be mid-commit
    return conn.query(sql).all(...args) as R[];
  } finally {
    conn.close();
  }
}
