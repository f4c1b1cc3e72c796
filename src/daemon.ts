// Starting and stopping the daemon: settings, token, store, kernel, HTTP listeners (TCP and the
// Unix socket sandboxes mount), signals.
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from "node:fs";
import { hostname, networkInterfaces } from "node:os";
import { dirname } from "node:path";
import { daemonFilePath, type DaemonRecord, clientUrl, probe, readDaemonFile, recordLive, removeDaemonFile, writeDaemonFile } from "./config/discovery.ts";
import { ensurePrivateDir } from "./config/dirs.ts";
import { boundHostNames, isLoopbackHost, resolveSettings, type SettingsFlags } from "./config/settings.ts";
import { resolveToken } from "./config/token.ts";
import { env } from "./config/env.ts";
import { pidNamespace } from "./machine/process.ts";
import { createKernel, type Kernel } from "./domain/kernel.ts";
import { AirlockError, errorMessage } from "./errors.ts";
import { createLog } from "./log.ts";
import { CallTaskRunner } from "./mcp/call-tasks.ts";
import { createDashboard } from "./mcp/dashboard.ts";
import { plain } from "./mcp/guard.ts";
import { type App, createApp, type Listening, listen, listenUnix, type McpApp } from "./mcp/server.ts";
import { openStore } from "./store/db.ts";
import { openPgStore } from "./store/pg/index.ts";
import type { Store } from "./store/store.ts";
import { VERSION } from "./version.ts";

const log = createLog("daemon");

// How long shutdown waits for in-flight answers before it closes the connections anyway.
const STOP_GRACE_MS = 2000;

// How long a start waits for an existing socket to answer before it calls the file stale.
const SOCKET_PROBE_MS = 1000;

export type DaemonFlags = SettingsFlags;

export interface Daemon {
  url: string;
  port: number;
  /** The Unix socket it also listens on, or null. */
  socket: string | null;
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
  // The socket comes next (its stale-file probe may await): until `app` is set, a request that
  // arrives on either listener gets 503 "starting", never a half-built daemon.
  let app: McpApp | undefined;
  const placeholder: App = { fetch: (req, via) => (app ? app.fetch(req, via) : Promise.resolve(plain(503, "starting"))) };
  let listening: Listening;
  try {
    listening = listen(placeholder, s.host, s.port);
  } catch (err) {
    throw await portInUseError(err, s.host, s.port);
  }
  let unix: UnixListening | null = null;
  if (s.socket !== null) {
    try {
      unix = await listenSocket(placeholder, s.socket, !s.socketExplicit);
    } catch (err) {
      // A socket the user asked for, or one a live daemon owns, is fatal; the default one in a
      // place the OS will not have (a path too long for sun_path, say) only costs sandboxes.
      if (s.socketExplicit || (err instanceof AirlockError && err.code === "config")) {
        await listening.server.stop(true);
        throw err;
      }
      log.warn(`not listening on the socket ${s.socket}: ${errorMessage(err)} (set --socket PATH to choose another)`);
    }
  }
  const servers = [listening, ...(unix ? [unix.listening] : [])];

  let token: string | undefined;
  let store: Store | undefined;
  let kernel: Kernel;
  let callTasks: CallTaskRunner;
  try {
    token = resolveToken({ required: !loopback });
    if (!loopback && token === undefined) throw new AirlockError("config", "a token is required to listen beyond loopback");
    store = s.store !== undefined ? await openPgStore(s.store, { durability: s.durability }) : openStore(s.dbPath, { durability: s.durability, batchBusyTurns: true });
    kernel = await createKernel({
      store,
      ...(s.hostGoneSeconds !== undefined ? { hostGoneMs: s.hostGoneSeconds * 1000 } : {}),
      journal: {
        ...(s.journalDays !== undefined ? { retentionMs: s.journalDays * 24 * 3600 * 1000 } : {}),
        ...(s.journalMax !== undefined ? { maxEntries: s.journalMax } : {}),
        benchOff: env.journalOff,
      },
    });
    // Before any request: the working call tasks the last run left resume their waits in their places.
    callTasks = new CallTaskRunner(kernel);
    await callTasks.start();
  } catch (err) {
    for (const l of servers) await l.server.stop(true);
    unix?.remove();
    await store?.close();
    throw err;
  }
  const machine = { addresses: Object.values(networkInterfaces()).flatMap((l) => (l ?? []).map((i) => i.address)), hostname: hostname() };
  const extraHosts = boundHostNames(s.host, machine);
  const dashboard = createDashboard({ kernel, token, extraHosts, port: listening.server.port ?? s.port });
  app = createApp({ kernel, token, extraHosts, dashboard, callTasks });
  const port = listening.server.port ?? s.port;
  // Only now, with every request answered by the real app, do clients learn where it is.
  const published = await publish({
    format: 1,
    pid: process.pid,
    host: s.host,
    port,
    url: clientUrl(s.host, port),
    socket: unix?.path ?? null,
    version: VERSION,
    started_at: new Date().toISOString(),
    auth: token !== undefined,
    pid_namespace: pidNamespace(),
  });

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // First, so no new client is sent to a daemon on its way out.
    if (published) removeDaemonFile();
    dashboard.close(); // open change feeds end, so the graceful stop need not wait for them
    app?.close(); // and so do the subscriptions/listen streams
    callTasks.close(); // the call tasks' calls, ended by the kernel's close, stay working: the next start resumes them
    kernel.close(); // answers blocked calls before the connections close
    // A graceful stop lets those answers (computed a few microtasks later) go out; stop(true)
    // at once would reset their connections. A client that lingers is cut after the grace.
    const graceful = Promise.all(servers.map((l) => l.server.stop(false)));
    await Promise.race([graceful, Bun.sleep(STOP_GRACE_MS)]);
    for (const l of servers) await l.server.stop(true);
    unix?.remove();
    await store.close();
  };
  // One line, its head unchanged ("listening on http://host:port"): scripts and tests parse it.
  const socketNote = unix ? `socket ${unix.path}, ` : "";
  log.info(`airlock ${VERSION} listening on ${listening.url} (${socketNote}${store.kind === "postgres" ? `store ${store.path}` : `db ${s.dbPath}`}, durability ${s.durability}${token ? ", bearer token required" : ""})`);
  return { url: listening.url, port, socket: unix?.path ?? null, kernel, store, stop };
}

/**
 * Writes daemon.json, unless it names another daemon that is alive and answers: the first one
 * keeps it (a service, say, while someone tries a second daemon on another port by hand). A file
 * whose pid is gone, or whose daemon does not answer, is stale and replaced. Returns whether
 * this daemon's record is the file's. The file is a convenience: failing to write it is a warning.
 */
async function publish(rec: DaemonRecord): Promise<boolean> {
  const path = daemonFilePath();
  const old = readDaemonFile(path);
  if (old !== undefined && old.pid !== rec.pid && recordLive(old)) {
    const ep = { url: old.url, unix: null, where: old.url, via: "daemon.json" as const };
    if ((await probe(ep, SOCKET_PROBE_MS)) === "ok") {
      log.info(`${path} names the daemon pid ${old.pid} on ${old.url}, which is alive: leaving it (the CLI and hooks find that one)`);
      return false;
    }
  }
  try {
    writeDaemonFile(rec, path);
    return true;
  } catch (err) {
    log.warn(`cannot write ${path}: ${errorMessage(err)} (the CLI and hooks find this daemon only through AIRLOCK_PORT or the default port)`);
    return false;
  }
}

interface UnixListening {
  path: string;
  listening: Listening;
  /** Removes the socket file if it is still the one this daemon made. */
  remove(): void;
}

/**
 * Listens on the Unix socket at `path`, 0600. A file already there is removed only when it is a
 * socket nobody answers on (left by a daemon killed with -9); a live daemon's socket, or any
 * other kind of file, is never touched: that start fails instead.
 */
async function listenSocket(app: App, path: string, isDefault: boolean): Promise<UnixListening> {
  // The default lives in the airlock home (0700); a chosen path's missing folders are made 0700,
  // but an existing folder (/run, /tmp) is left as the user has it.
  if (isDefault) ensurePrivateDir(dirname(path));
  else mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let listening: Listening;
  try {
    listening = listenUnix(app, path);
  } catch (err) {
    if (!isAddressInUse(err)) throw err;
    if (!lstatSync(path, { throwIfNoEntry: false })?.isSocket()) {
      throw new AirlockError("config", `${path} exists and is not a socket; remove it or choose another path with --socket`);
    }
    if (await socketAnswers(path)) {
      throw new AirlockError(
        "config",
        `an Airlock daemon is already listening on the socket ${path}. Use it as it is, stop it first, or start this one with --socket PATH (or --socket off).`,
      );
    }
    log.info(`removing the stale socket ${path} (nothing answers on it)`);
    unlinkSync(path);
    listening = listenUnix(app, path);
  }
  chmodSync(path, 0o600);
  const ino = lstatSync(path).ino;
  return {
    path,
    listening,
    remove() {
      try {
        // Bun removes it on stop; a socket at the same path with another inode is someone else's.
        if (lstatSync(path, { throwIfNoEntry: false })?.ino === ino) unlinkSync(path);
      } catch {
        // already gone
      }
    },
  };
}

function isAddressInUse(err: unknown): boolean {
  return (err as { code?: string }).code === "EADDRINUSE" || /EADDRINUSE|in use/i.test(errorMessage(err));
}

/**
 * Whether something lives behind the socket (an Airlock, or another program we must not unlink).
 * Only a refused connection proves the file stale: a slow or non-HTTP answer counts as alive.
 */
async function socketAnswers(path: string): Promise<boolean> {
  try {
    await fetch("http://localhost/healthz", { unix: path, signal: AbortSignal.timeout(SOCKET_PROBE_MS) });
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return code !== "ECONNREFUSED" && code !== "ENOENT";
  }
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
const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

export async function runDaemon(flags: DaemonFlags): Promise<void> {
  // The handlers come first, so a SIGTERM never meets the default action once the daemon has
  // said "listening on" (a service manager, or a test, may stop it that soon): it stops cleanly.
  // Before then there is nothing to hand back, so the start is cut short with the usual code;
  // a crash, or that early exit, still removes daemon.json if this process wrote it.
  process.on("exit", () => removeDaemonFile());
  let d: Daemon | undefined;
  const shutdown = (signal: string) => {
    if (!d) process.exit(SIGNAL_EXIT[signal] ?? 1);
    log.info(`${signal}: shutting down`);
    void d.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  d = await startDaemon(flags);
}
