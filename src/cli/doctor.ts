// `airlock doctor`: checks what usually goes wrong (binary, service, port, token, database)
// and prints, for each problem, what to do about it. Exits 1 when something needs fixing.
import { existsSync, statSync } from "node:fs";
import { defineCommand } from "citty";
import { clientPath } from "../clients/command.ts";
import { defaultDbPath, tokenPath } from "../config/dirs.ts";
import { type Endpoint, lookup, probe } from "../config/discovery.ts";
import { readStoreFile, resolveStore } from "../config/settings.ts";
import { readTokenFile } from "../config/token.ts";
import { errorMessage } from "../errors.ts";
import { currentServiceEnv, installedStoreFile, launchdPlistPath, systemdUnitPath } from "../service/install.ts";
import { systemRunner } from "../service/runner.ts";
import { SYSTEMD_UNIT_NAME } from "../service/systemd.ts";
import { LAUNCHD_LABEL } from "../service/launchd.ts";
import { openStore } from "../store/db.ts";
import { openPgStore, type PgStore } from "../store/pg/index.ts";
import { DEAD_AFTER_MS } from "../store/store.ts";
import { get } from "../store/tx.ts";
import { VERSION } from "../version.ts";
import { env } from "../config/env.ts";
import { daemonUrl, describePlace, PORT_ARG, places, rpcAt } from "./client.ts";
import { type Check, clientChecks } from "./doctor-clients.ts";

export type { Check } from "./doctor-clients.ts";

async function checks(port: string | undefined): Promise<Check[]> {
  return [...(await coreChecks(port)), ...(await clientChecks({ daemonUrl: `${daemonUrl({ port }).replace(/\/$/, "")}/` }))];
}

async function coreChecks(port: string | undefined): Promise<Check[]> {
  const out: Check[] = [];
  const r = systemRunner({ dryRun: true, say: () => {} });
  const se = currentServiceEnv({ xdgConfigHome: env.xdgConfigHome, home: env.userHome });

  // Binary
  const onPath = Bun.which("airlock", { PATH: clientPath() }); // as a client finds it: no npx node_modules/.bin
  out.push({ ok: true, what: `this is airlock ${VERSION} at ${se.program.join(" ")}` });
  if (!onPath) out.push({ ok: "warn", what: "`airlock` is not on your PATH", fix: "add the folder that holds it (e.g. ~/.local/bin) to PATH" });
  else if (se.program.length === 1 && onPath !== se.program[0]) out.push({ ok: "warn", what: `PATH finds another airlock first: ${onPath}` });

  // Service
  if (se.platform === "linux") {
    const unit = systemdUnitPath(se);
    if (!existsSync(unit)) out.push({ ok: "warn", what: "no systemd user service is installed", fix: "airlock install-service" });
    else {
      const active = r.probe(["systemctl", "--user", "is-active", SYSTEMD_UNIT_NAME]);
      out.push(
        active.stdout.trim() === "active"
          ? { ok: true, what: `service ${SYSTEMD_UNIT_NAME} is active` }
          : { ok: false, what: `service ${SYSTEMD_UNIT_NAME} is ${active.stdout.trim() || "not running"}`, fix: `systemctl --user restart ${SYSTEMD_UNIT_NAME}; journalctl --user -u ${SYSTEMD_UNIT_NAME}` },
      );
    }
  } else if (se.platform === "darwin") {
    const plist = launchdPlistPath(se);
    if (!existsSync(plist)) out.push({ ok: "warn", what: "no launchd agent is installed", fix: "airlock install-service" });
    else {
      const loaded = r.probe(["launchctl", "print", `gui/${se.uid}/${LAUNCHD_LABEL}`]);
      out.push(loaded.code === 0 ? { ok: true, what: `launchd agent ${LAUNCHD_LABEL} is loaded` } : { ok: false, what: `launchd agent ${LAUNCHD_LABEL} is not loaded`, fix: "airlock install-service" });
    }
  }

  // The daemon: wherever it is, never "start one" while one runs.
  out.push(...(await daemonChecks(r, port)));

  // Token
  const tp = tokenPath();
  if (env.token !== undefined) out.push({ ok: true, what: "token comes from AIRLOCK_TOKEN" });
  else if (!existsSync(tp)) out.push({ ok: se.platform === "darwin" ? true : "warn", what: `no token file at ${tp}`, fix: se.platform === "darwin" ? undefined : "start the daemon once: it creates one" });
  else {
    try {
      const t = readTokenFile(tp);
      out.push({ ok: true, what: `token file ${tp} is private (0${(statSync(tp).mode & 0o777).toString(8)}), ${t.length} characters` });
    } catch (err) {
      out.push({ ok: false, what: errorMessage(err) });
    }
  }

  // The shared store, when this machine's daemon uses one (the environment, or the service's
  // --store-file): reachable, at this binary's schema, and who else is there.
  let storeUrl: string | undefined;
  try {
    storeUrl = resolveStore({});
    const file = storeUrl === undefined ? installedStoreFile(se, r) : undefined;
    if (file !== undefined) storeUrl = readStoreFile(file);
  } catch (err) {
    out.push({ ok: false, what: errorMessage(err) });
  }
  if (storeUrl !== undefined) {
    out.push(await storeCheck(storeUrl));
    return out;
  }

  // Database
  const db = defaultDbPath();
  if (!existsSync(db)) out.push({ ok: "warn", what: `no database yet at ${db}`, fix: "it is created when the daemon first starts" });
  else {
    try {
      const store = openStore(db, { readonly: true });
      const row = store.db.query("PRAGMA quick_check").get() as { quick_check: string };
      store.close();
      out.push(row.quick_check === "ok" ? { ok: true, what: `database ${db} passes quick_check` } : { ok: false, what: `database ${db} is damaged: ${row.quick_check}`, fix: "stop the daemon, move the file aside, start again (state is lost)" });
    } catch (err) {
      out.push({ ok: false, what: `cannot read database ${db}: ${errorMessage(err)}` });
    }
  }
  return out;
}

/** "127.0.0.1:5555", or "the socket PATH". */
function place(ep: Endpoint): string {
  return ep.unix ? `the socket ${ep.unix}` : ep.url.replace(/^http:\/\//, "");
}

function portOf(ep: Endpoint): string | undefined {
  return ep.unix ? undefined : /:(\d+)$/.exec(ep.url)?.[1];
}

/**
 * Probes every place the CLI and the hooks look (SPEC §8: the user's choice, daemon.json, the
 * default socket, the default port) and reports the daemon that answers first. Advises starting
 * one only when nothing answers anywhere: a daemon on another port is reported, not duplicated.
 */
async function daemonChecks(r: ReturnType<typeof systemRunner>, port: string | undefined): Promise<Check[]> {
  const out: Check[] = [];
  const l = lookup({ port, all: true });
  const chosen = l.explicit ? l.candidates.filter((c) => c.via === "--port" || c.via === "--host" || c.via.startsWith("AIRLOCK_")) : [];
  let found: Endpoint | undefined;
  const silent: Endpoint[] = [];
  for (const ep of l.candidates) {
    const health = await probe(ep);
    if (health === "ok") {
      found = ep;
      break;
    }
    if (health === undefined) silent.push(ep);
    else if (chosen.includes(ep) || (ep.via === "default port" && !l.explicit)) {
      // Something that is not Airlock holds the place the user (or the default) points at.
      const p = portOf(ep);
      out.push({ ok: false, what: `${place(ep)} is used by another program (${health}) ${p ? portOwner(r, p) : ""}`.trimEnd(), fix: "stop that program, or run airlock with --port" });
    }
  }
  if (!found) {
    const head = l.candidates[0]!;
    const rest = l.candidates.slice(1);
    out.push({
      ok: false,
      what: `nothing listens on ${place(head)}${rest.length ? `, nor at ${places(rest)}` : ""}${l.skipped.length ? ` (${l.skipped.join("; ")})` : ""}`,
      fix: "airlock install-service, or airlock daemon",
    });
    return out;
  }
  const missed = chosen.filter((c) => silent.includes(c));
  if (missed.length > 0 && !chosen.includes(found)) {
    const fp = portOf(found);
    out.push({
      ok: "warn",
      what: `nothing answers at ${places(missed)} (${missed.map((m) => m.via).join(", ")}), but a daemon does at ${place(found)}`,
      fix: `the CLI and hooks use only what ${missed.map((m) => m.via).join(" and ")} says: ${fp ? `set it to ${fp}, or ` : ""}unset it`,
    });
  }
  try {
    const { result } = await rpcAt("initialize", { protocolVersion: "2025-06-18" }, { endpoint: found }, 3000);
    const v = (result as { serverInfo: { name: string; version: string } }).serverInfo.version;
    let pid = found.pid ?? null;
    if (pid === null) {
      try {
        pid = ((await rpcAt("airlock/identity", {}, { endpoint: found }, 2000)).result as { pid?: number }).pid ?? null;
      } catch {
        // an older daemon: no pid to show
      }
    }
    const desc = describePlace({ url: found.unix ? null : found.url, socket: found.unix, pid, found_by: found.via });
    out.push(v === VERSION ? { ok: true, what: `airlock ${v} answers on ${desc}` } : { ok: "warn", what: `the daemon on ${desc} is airlock ${v}, this binary is ${VERSION}`, fix: "airlock install-service (restarts the service with this binary)" });
  } catch (err) {
    out.push({ ok: false, what: `something answers /healthz on ${place(found)} but a call failed: ${errorMessage(err)}`, fix: "check the token: airlock token" });
  }
  if (found.via === "default socket") {
    out.push({ ok: "warn", what: "no daemon.json names this daemon, so its TCP port is not known here (clients configured with a URL may miss it)", fix: "restart it (it writes ~/.airlock/daemon.json on start), or set AIRLOCK_PORT" });
  }
  return out;
}

async function storeCheck(url: string): Promise<Check> {
  let store: PgStore | undefined;
  try {
    store = await openPgStore(url, { readonly: true });
    const live = await store.read(get<{ n: number }>(`SELECT COUNT(*) AS n FROM daemons WHERE seen_at >= (extract(epoch from clock_timestamp()) * 1000)::bigint - ?`, DEAD_AFTER_MS));
    return { ok: true, what: `shared store ${store.path} answers, at this airlock's schema; ${live?.n ?? 0} daemon(s) with a live heartbeat` };
  } catch (err) {
    return { ok: false, what: errorMessage(err), fix: "check the URL, the network path to the database, and its credentials (docs/cluster.md)" };
  } finally {
    await store?.close();
  }
}

/** Best effort: which process holds the port (ss on Linux, lsof elsewhere). */
function portOwner(r: ReturnType<typeof systemRunner>, port: string): string {
  const ss = r.which("ss") ? r.probe(["ss", "-ltnpH", `sport = :${port}`]) : undefined;
  const m = ss && /users:\(\("([^"]+)",pid=(\d+)/.exec(ss.stdout);
  if (m) return `(${m[1]}, pid ${m[2]})`;
  const lsof = r.which("lsof") ? r.probe(["lsof", "-nP", `-iTCP:${port}`, "-sTCP:LISTEN", "-Fpc"]) : undefined;
  const pid = lsof && /^p(\d+)$/m.exec(lsof.stdout)?.[1];
  const cmd = lsof && /^c(.+)$/m.exec(lsof.stdout)?.[1];
  return pid ? `(${cmd ?? "?"}, pid ${pid})` : "";
}

export const doctorCommand = defineCommand({
  meta: { name: "doctor", description: "Check the binary, service, daemon, token, database and clients, and say what to fix" },
  args: { port: PORT_ARG },
  async run({ args }) {
    const results = await checks(args.port);
    for (const c of results) {
      const mark = c.ok === true ? "ok  " : c.ok === "warn" ? "warn" : "FAIL";
      console.log(`${mark}  ${c.what}${c.fix ? `\n      → ${c.fix}` : ""}`);
    }
    if (results.some((c) => c.ok === false)) process.exitCode = 1;
  },
});
