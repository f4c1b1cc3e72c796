// Codex runs a non-managed hook only once the user has trusted its exact hash (`/hooks`), and
// `codex exec` skips an untrusted one without a word. So `airlock setup codex` records trust the
// way Codex itself does, through its app-server (JSON-RPC, one JSON object per line on stdio),
// never by computing Codex's hash: `initialize` → `initialized` → `hooks/list {cwds}` (each hook
// with `key`, `command`, `currentHash`, `trustStatus`) → `config/batchWrite` with one edit per
// hook, `hooks.state."<key>".trusted_hash = <currentHash>`, which Codex writes into the user's
// config.toml. Seen in Codex 0.171.0 (`codex app-server generate-ts`); the same calls node9-proxy
// makes. The keys (`<hooks.json>:<event>:<group>:<handler>`) are positional: once the user adds a
// hook group before ours, the same key names the user's hook. So setup remembers each key with
// the hash it wrote, and --remove takes an entry out only while it still holds that hash.
import { parse as parseToml, patch as patchToml } from "@decimalturn/toml-patch";
import { errorMessage } from "../errors.ts";
import { isOurHookCommand } from "./client.ts";
import { readOrNull, withFileLock, writeAtomic } from "./files.ts";

/** A whole app-server session (start, three calls, exit) takes a second or two; 30 s means stuck. */
const APP_SERVER_TIMEOUT_MS = 30_000;
/** How long app-server has to exit after SIGTERM before it gets SIGKILL. */
const EXIT_GRACE_MS = 2000;

export interface CodexHook {
  key: string;
  eventName: string;
  command: string;
  sourcePath: string;
  currentHash: string;
  trustStatus: "managed" | "untrusted" | "trusted" | "modified" | string;
}

export interface TrustResult {
  /** Our hooks as Codex lists them after the write. */
  hooks: CodexHook[];
  /** The ones this run trusted (they were untrusted or modified). */
  trusted: CodexHook[];
}

type Pending = { resolve(v: unknown): void; reject(e: Error): void };

/** A short app-server session: `call` sends a request and resolves with its result. */
async function withAppServer<T>(codex: string, env: Record<string, string | undefined>, fn: (call: (method: string, params: unknown) => Promise<unknown>) => Promise<T>): Promise<T> {
  const proc = Bun.spawn([codex, "app-server"], { env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let stderr = "";
  void new Response(proc.stderr).text().then((t) => (stderr = t));
  const failAll = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (!line) continue;
        let msg: { id?: number; result?: unknown; error?: { message?: string } };
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        const p = msg.id === undefined ? undefined : pending.get(msg.id);
        if (!p) continue; // a notification, or a request to us we do not answer
        pending.delete(msg.id!);
        if (msg.error) p.reject(new Error(msg.error.message ?? JSON.stringify(msg.error)));
        else p.resolve(msg.result);
      }
    }
    failAll(new Error(`codex app-server exited (${stderr.trim().split("\n").at(-1) ?? "no output"})`));
  })();
  const send = (m: unknown) => {
    proc.stdin.write(`${JSON.stringify(m)}\n`);
    void proc.stdin.flush();
  };
  const call = (method: string, params: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve, reject });
      send({ id, method, params });
    });
  const timer = setTimeout(() => failAll(new Error(`codex app-server did not answer within ${APP_SERVER_TIMEOUT_MS / 1000} s`)), APP_SERVER_TIMEOUT_MS);
  try {
    await call("initialize", { clientInfo: { name: "airlock", title: "Airlock setup", version: "1" }, capabilities: null });
    send({ method: "initialized" });
    return await fn(call);
  } finally {
    clearTimeout(timer);
    // EOF on stdin is how app-server learns its client is gone; SIGTERM, then SIGKILL after a grace.
    try {
      void proc.stdin.end();
    } catch {
      // already closed
    }
    proc.kill();
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(EXIT_GRACE_MS).then(() => false)]);
    if (!exited) {
      proc.kill("SIGKILL");
      await proc.exited;
    }
    void reading;
  }
}

interface HooksList {
  data: { cwd: string; hooks: (CodexHook & { handlerType?: string })[]; errors?: unknown[] }[];
}

/** Our command hooks from `hooksFile`, as Codex lists them for `cwd`. */
function ours(list: HooksList, hooksFile: string): CodexHook[] {
  const seen = new Set<string>();
  return list.data
    .flatMap((e) => e.hooks)
    .filter((h) => h.handlerType === "command" && h.sourcePath === hooksFile && isOurHookCommand(h.command, "codex"))
    .filter((h) => !seen.has(h.key) && (seen.add(h.key), true));
}

/** TOML key path segment, quoted the way Codex's own keys need (they hold `/` and `:`). */
const keyPath = (key: string) => `hooks.state.${JSON.stringify(key)}.trusted_hash`;

/** Lists our hooks (read-only): what `doctor` asks. */
export async function listCodexHooks(o: { codex: string; cwd: string; hooksFile: string; env?: Record<string, string | undefined> }): Promise<CodexHook[]> {
  return withAppServer(o.codex, o.env ?? process.env, async (call) => ours((await call("hooks/list", { cwds: [o.cwd] })) as HooksList, o.hooksFile));
}

/** Trusts every hook of ours in `hooksFile` that Codex does not trust yet, then lists them again. */
export async function trustCodexHooks(o: { codex: string; cwd: string; hooksFile: string; env?: Record<string, string | undefined> }): Promise<TrustResult> {
  return withAppServer(o.codex, o.env ?? process.env, async (call) => {
    const before = ours((await call("hooks/list", { cwds: [o.cwd] })) as HooksList, o.hooksFile);
    const todo = before.filter((h) => h.trustStatus === "untrusted" || h.trustStatus === "modified");
    if (todo.length > 0) {
      await call("config/batchWrite", { edits: todo.map((h) => ({ keyPath: keyPath(h.key), value: h.currentHash, mergeStrategy: "upsert" })), reloadUserConfig: false });
    }
    const after = ours((await call("hooks/list", { cwds: [o.cwd] })) as HooksList, o.hooksFile);
    return { hooks: after, trusted: todo };
  });
}

/**
 * Takes `hooks.state."<key>"` out of config.toml for each key setup trusted whose trusted_hash is
 * still the one setup wrote (and `hooks.state`, `hooks` when nothing else is left in them).
 * Returns the keys it removed.
 */
export async function untrustCodexHooks(configFile: string, written: Record<string, string>, dryRun = false): Promise<string[]> {
  if (Object.keys(written).length === 0) return [];
  const edit = (): string[] => {
    const text = readOrNull(configFile);
    if (text === null) return [];
    let doc: Record<string, unknown>;
    try {
      doc = parseToml(text) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`${configFile} is not valid TOML (${errorMessage(err)}); the hook trust entries were left in it`);
    }
    const hooks = doc.hooks as Record<string, unknown> | undefined;
    const state = hooks?.state as Record<string, unknown> | undefined;
    if (!state || typeof state !== "object") return [];
    const holds = (k: string) => (state[k] as { trusted_hash?: unknown } | undefined)?.trusted_hash === written[k];
    const removed = Object.keys(written).filter((k) => k in state && holds(k));
    if (removed.length === 0) return [];
    for (const k of removed) delete state[k];
    if (Object.keys(state).length === 0) delete hooks!.state;
    if (hooks && Object.keys(hooks).length === 0) delete doc.hooks;
    if (!dryRun) writeAtomic(configFile, patchToml(text, doc));
    return removed;
  };
  return dryRun ? edit() : withFileLock(configFile, edit);
}
