// Starting and stopping the daemon: settings, token, store, kernel, HTTP listener, signals.
import { hostname, networkInterfaces } from "node:os";
import { boundHostNames, isLoopbackHost, resolveSettings } from "./config/settings.ts";
import { resolveToken } from "./config/token.ts";
import { createKernel, type Kernel } from "./domain/kernel.ts";
import { AirlockError, errorMessage } from "./errors.ts";
import { createLog } from "./log.ts";
import { plain } from "./mcp/guard.ts";
import { type App, createApp, listen } from "./mcp/server.ts";
import { openStore, type Store } from "./store/db.ts";
import { VERSION } from "./version.ts";

const log = createLog("daemon");

// How long shutdown waits for in-flight answers before it closes the connections anyway.
const STOP_GRACE_MS = 2000;

export interface DaemonFlags {
  port?: string | undefined;
  host?: string | undefined;
  db?: string | undefined;
  durability?: string | undefined;
}

export interface Daemon {
  url: string;
  port: number;
  kernel: Kernel;
  store: Store;
  stop(): Promise<void>;
}

export async function startDaemon(flags: DaemonFlags): Promise<Daemon> {
  const s = resolveSettings(flags);
  const loopback = isLoopbackHost(s.host);
  if (!loopback && !s.hostExplicit) throw new AirlockError("config", `refusing to listen on ${s.host} without an explicit --host`);

  // Bind first: a second daemon started by mistake on a busy port must fail before it creates
  // a token or opens (creates, migrates, expires entries in) a database another daemon owns.
  // No request is served before `app` is set: everything up to that point is synchronous.
  let app: App | undefined;
  let listening: ReturnType<typeof listen>;
  try {
    listening = listen({ fetch: (req) => (app ? app.fetch(req) : Promise.resolve(plain(503, "starting"))) }, s.host, s.port);
  } catch (err) {
    throw await portInUseError(err, s.host, s.port);
  }

  let token: string | undefined;
  let store: Store | undefined;
  let kernel: Kernel;
  try {
    token = resolveToken({ required: !loopback });
    if (!loopback && token === undefined) throw new AirlockError("config", "a token is required to listen beyond loopback");
    store = openStore(s.dbPath, { durability: s.durability });
    kernel = createKernel({ store });
  } catch (err) {
    await listening.server.stop(true);
    store?.close();
    throw err;
  }
  const machine = { addresses: Object.values(networkInterfaces()).flatMap((l) => (l ?? []).map((i) => i.address)), hostname: hostname() };
  app = createApp({ kernel, token, extraHosts: boundHostNames(s.host, machine) });

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    kernel.close(); // answers blocked calls before the connections close
    // A graceful stop lets those answers (computed a few microtasks later) go out; stop(true)
    // at once would reset their connections. A client that lingers is cut after the grace.
    const graceful = listening.server.stop(false);
    await Promise.race([graceful, Bun.sleep(STOP_GRACE_MS)]);
    await listening.server.stop(true);
    store.close();
  };
  log.info(`airlock ${VERSION} listening on ${listening.url} (db ${s.dbPath}, durability ${s.durability}${token ? ", bearer token required" : ""})`);
  return { url: listening.url, port: listening.server.port ?? s.port, kernel, store, stop };
}

async function portInUseError(err: unknown, host: string, port: number): Promise<AirlockError> {
  const code = (err as { code?: string }).code;
  const msg = errorMessage(err);
  if (code !== "EADDRINUSE" && !/in use|EADDRINUSE/i.test(msg)) return new AirlockError("config", `cannot listen on ${host}:${port}: ${msg}`);
  let isAirlock = false;
  try {
    const h = host.includes(":") ? `[${host}]` : host;
    const r = await fetch(`http://${h}:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
    isAirlock = r.ok && (await r.text()).trim() === "ok";
  } catch {
    // not answering HTTP: some other program
  }
  return new AirlockError(
    "config",
    isAirlock
      ? `an Airlock daemon is already running on ${host}:${port}. Use it as it is, or stop it first ` +
          "(`airlock uninstall-service`, `systemctl --user stop airlock`, or `launchctl bootout gui/$(id -u)/com.airlock.daemon`), " +
          "or start this one on another port with --port."
      : `port ${port} on ${host} is already in use by another program; stop it or start airlock with --port <n>.`,
  );
}

/** Runs the daemon until SIGINT or SIGTERM, then shuts down cleanly. */
export async function runDaemon(flags: DaemonFlags): Promise<void> {
  const d = await startDaemon(flags);
  const shutdown = (signal: string) => {
    log.info(`${signal}: shutting down`);
    void d.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}
