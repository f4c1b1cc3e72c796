// TLS to PostgreSQL, end to end (docs/cluster.md): the store takes `sslmode` and `sslrootcert`
// from its URL and hands them to Bun's client, so this checks what that buys against a real
// server with TLS. The file makes a throwaway private CA, a server certificate for localhost and
// 127.0.0.1 signed by it, and a second, unrelated CA; starts a PostgreSQL cluster of its own
// (.ci/pg.sh, with ssl=on and those files) that takes TCP connections over TLS only, with a
// password; and opens the store (and, once, a daemon) on it with each sslmode.
//
// Skipped, with the reason printed, without openssl or PostgreSQL's programs, or when the server
// cannot be started here. As root the server runs as the postgres user, so everything it reads
// lives under /var/tmp (a /tmp of mode 0700 is closed to that user).
import { afterAll, describe, expect, test } from "bun:test";
import { SQL, type TCPSocketListener } from "bun";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AirlockError } from "../../src/errors.ts";
import { openPgStore } from "../../src/store/pg/index.ts";
import { get, run } from "../../src/store/tx.ts";
import { ROOT, runCli, startDaemon, tempHome } from "../helpers/daemon.ts";
import { PG_URL } from "../helpers/pg.ts";

/** The password of the server's postgres role: it must never show up in a message or a log. */
const PASSWORD = `tls-secret-${randomBytes(6).toString("hex")}`;
/** The databases the store and the daemon use on the TLS server. */
const STORE_DB = "airlock_tls_store";
const DAEMON_DB = "airlock_tls_daemon";
/** A PostgreSQL server without TLS, for sslmode=require to refuse (the dev server's usual URL). */
const DEV_PG = "postgres://postgres@127.0.0.1:55432/postgres";
/** How long the server may take to accept TCP connections on an address once started. */
const READY_MS = 10_000;

interface Server {
  base: string; // everything this file made; removed in afterAll
  pgDir: string; // .ci/pg.sh's DIR
  port: number;
  ca: string; // the CA that signed the server's certificate
  otherCa: string; // a CA that has nothing to do with it
  /** Another loopback address the server listens on, not on its certificate, or null. */
  otherHost: string | null;
}

// Bun turns certificate checks off in every sslmode when NODE_TLS_REJECT_UNAUTHORIZED=0 (it
// reads the variable at each connect): the refusals below would pass through. Not for this file.
const savedRejectUnauthorized = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;

/** Why the TLS tests cannot run here (anything else that goes wrong in the set-up fails the file). */
class Skip extends Error {}

let server: Server | null = null;
let skipReason: string | null = null;
try {
  server = await startServer();
} catch (err) {
  if (!(err instanceof Skip)) throw err;
  skipReason = err.message;
}
if (skipReason) console.warn(`pg-tls.test.ts: skipped: ${skipReason}`);
else if (!server?.otherHost) console.warn("pg-tls.test.ts: 127.0.0.2 is not usable here: the host name check is skipped");
const plainServer = await findPlainServer();

afterAll(async () => {
  if (savedRejectUnauthorized !== undefined) process.env.NODE_TLS_REJECT_UNAUTHORIZED = savedRejectUnauthorized;
  if (!server) return;
  const stop = Bun.spawnSync([join(ROOT, ".ci/pg.sh"), "stop", server.pgDir], { stdout: "ignore", stderr: "pipe" });
  if (stop.exitCode !== 0) console.warn(`pg-tls.test.ts: ${stop.stderr.toString().trim()}`);
  rmSync(server.base, { recursive: true, force: true });
});

// --- Setting up ------------------------------------------------------------------------------

function sh(cmd: string[], cwd?: string): string {
  const p = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe", env: process.env });
  if (p.exitCode !== 0) throw new Skip(`${cmd.slice(0, 2).join(" ")} failed: ${p.stderr.toString().trim().split("\n").slice(-3).join(" / ")}`);
  return p.stdout.toString();
}

/** Whether this machine lets a socket listen on host (127.0.0.2: Linux routes all of 127/8 to lo). */
function canListen(host: string): boolean {
  let l: TCPSocketListener | undefined;
  try {
    l = Bun.listen({ hostname: host, port: 0, socket: { data() {} } });
    return true;
  } catch {
    return false;
  } finally {
    l?.stop(true);
  }
}

function hasPostgres(): boolean {
  const debian = existsSync("/usr/lib/postgresql") && readdirSync("/usr/lib/postgresql").some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`));
  return debian || Bun.which("initdb") !== null;
}

/** Resolves once host:port accepts a TCP connection, retrying while it is refused (a server still
 *  starting up), for at most READY_MS; then fails with the server's last log lines. */
async function acceptsConnections(host: string, port: number, log: string): Promise<void> {
  const deadline = performance.now() + READY_MS;
  let last = "";
  for (;;) {
    try {
      const sock = await Bun.connect({ hostname: host, port, socket: { data() {} } });
      sock.end();
      return;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (performance.now() > deadline) {
      const tail = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").slice(-5).join(" / ") : "(no log)";
      throw new Error(`the TLS server does not accept connections on ${host}:${port} after ${READY_MS} ms (${last}); its log: ${tail}`);
    }
    await Bun.sleep(50);
  }
}

/** The CA, the other CA and the server's certificate and key, made with openssl in dir. */
function makeCertificates(dir: string): void {
  // EC keys: quick to make. A CA is marked as one; the server's certificate names localhost and
  // 127.0.0.1 (a host name check reads the subjectAltName, not the CN).
  const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const caExt = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"];
  sh(["openssl", "req", "-x509", ...newKey, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=Airlock test CA", ...caExt], dir);
  sh(["openssl", "req", "-x509", ...newKey, "-keyout", "other-ca.key", "-out", "other-ca.crt", "-days", "2", "-subj", "/CN=Unrelated test CA", ...caExt], dir);
  sh(["openssl", "req", ...newKey, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], dir);
  writeFileSync(join(dir, "server.ext"), "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n");
  sh(["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "server.ext"], dir);
}

async function startServer(): Promise<Server> {
  if (!Bun.which("openssl")) throw new Skip("no openssl to make certificates with");
  if (!hasPostgres()) throw new Skip("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH)");
  const root = process.getuid?.() === 0;
  let owner: { uid: number; gid: number } | null = null;
  if (root) {
    const id = Bun.spawnSync(["id", "postgres"], { stdout: "pipe", stderr: "ignore" });
    if (id.exitCode !== 0) throw new Skip("running as root and there is no postgres user to run the server as");
    owner = { uid: Number(sh(["id", "-u", "postgres"]).trim()), gid: Number(sh(["id", "-g", "postgres"]).trim()) };
  }
  const base = mkdtempSync(join(root ? "/var/tmp" : tmpdir(), "airlock-pg-tls-"));
  try {
    chmodSync(base, 0o755); // the server's user reaches pki/ and pg/ through it
    const pki = join(base, "pki");
    mkdirSync(pki, { mode: 0o755 });
    makeCertificates(pki);
    // localhost may resolve to ::1 first: the server listens there too when it can.
    const listen = ["127.0.0.1", ...(canListen("::1") ? ["::1"] : [])];
    const otherHost = canListen("127.0.0.2") ? "127.0.0.2" : null;
    if (otherHost) listen.push(otherHost);
    // Over TCP: TLS and the password (SCRAM), or nothing. The socket, for the set-up only, trusts.
    const net = (a: string) => (a.includes(":") ? `${a}/128` : `${a}/32`);
    const hba = ["local all all trust", ...listen.map((a) => `hostssl all all ${net(a)} scram-sha-256`), "host all all all reject"];
    writeFileSync(join(pki, "pg_hba.conf"), `${hba.join("\n")}\n`);
    chmodSync(join(pki, "server.key"), 0o600); // PostgreSQL refuses a key others can read
    if (owner) for (const f of ["server.key", "server.crt", "pg_hba.conf"]) chownSync(join(pki, f), owner.uid, owner.gid);
    const pgDir = join(base, "pg");
    const opts = [
      "-c ssl=on",
      `-c ssl_cert_file=${pki}/server.crt`,
      `-c ssl_key_file=${pki}/server.key`,
      `-c hba_file=${pki}/pg_hba.conf`,
      `-c listen_addresses=${listen.join(",")}`,
      "-c fsync=off",
    ].join(" ");
    const start = Bun.spawnSync([join(ROOT, ".ci/pg.sh"), "start", pgDir], { stdout: "pipe", stderr: "pipe", env: { ...process.env, PG_SERVER_OPTS: opts } });
    if (start.exitCode !== 0) throw new Skip(`the server did not start: ${start.stderr.toString().trim().split("\n").slice(-3).join(" / ")}`);
    const port = Number(new URL(start.stdout.toString().trim()).port);
    // pg_ctl -w has waited for the server to be ready, and pg.sh for it to have bound every
    // address; still, every test below needs each one to answer, so make sure before any asserts.
    for (const host of listen) await acceptsConnections(host, port, join(pgDir, "log"));
    // Through the socket (trust): the role's password, and a database for each user of it.
    const admin = new SQL({ path: pgDir, port, username: "postgres", database: "postgres", max: 1 });
    try {
      await admin.unsafe(`ALTER ROLE postgres PASSWORD '${PASSWORD}'`);
      for (const db of [STORE_DB, DAEMON_DB]) await admin.unsafe(`CREATE DATABASE ${db}`);
    } finally {
      await admin.close();
    }
    return { base, pgDir, port, ca: join(pki, "ca.crt"), otherCa: join(pki, "other-ca.crt"), otherHost };
  } catch (err) {
    // Half set up: stop what runs, remove what was made.
    if (existsSync(join(base, "pg", "db", "postmaster.pid"))) Bun.spawnSync([join(ROOT, ".ci/pg.sh"), "stop", join(base, "pg")], { stdout: "ignore", stderr: "ignore" });
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
}

/** A reachable PostgreSQL server with ssl=off (the tests' AIRLOCK_TEST_PG, or the dev server), or null. */
async function findPlainServer(): Promise<string | null> {
  for (const url of [PG_URL, DEV_PG]) {
    if (!url) continue;
    const sql = new SQL(url, { max: 1, connectionTimeout: 2, tls: "disable" });
    try {
      const [row] = (await sql.unsafe("SHOW ssl")) as { ssl: string }[];
      if (row?.ssl === "off") return url;
    } catch {
      // not there, or not one we can use
    } finally {
      await sql.close({ timeout: 0 }).catch(() => undefined);
    }
  }
  return null;
}

// --- Helpers ---------------------------------------------------------------------------------

/**
 * A URL to the TLS server: its host, database, password and query (sslmode, sslrootcert), the
 * query written as a person would, paths as they are (these have nothing to escape).
 */
function tlsUrl(query: Record<string, string>, o: { host?: string; db?: string; password?: string } = {}): string {
  const q = Object.entries(query).map(([k, v]) => `${k}=${v}`);
  return `postgres://postgres:${o.password ?? PASSWORD}@${o.host ?? "localhost"}:${server!.port}/${o.db ?? STORE_DB}?${q.join("&")}`;
}

/** The URL with this password in it. */
function withPassword(url: string, password = PASSWORD): string {
  const u = new URL(url);
  u.password = password;
  return u.toString();
}

/** What openPgStore(url) rejects with; fails the test if it opens. */
async function refusal(url: string): Promise<AirlockError> {
  let store: Awaited<ReturnType<typeof openPgStore>> | undefined;
  try {
    store = await openPgStore(url);
  } catch (err) {
    expect(err).toBeInstanceOf(AirlockError);
    return err as AirlockError;
  }
  await store.close();
  throw new Error(`openPgStore opened ${url.replace(PASSWORD, "***")}; it should have been refused`);
}

/** The checks every refusal passes: a config error, the store's wording, the password hidden. */
function expectRefused(err: AirlockError, password = PASSWORD): void {
  expect(err.code).toBe("config");
  expect(err.message).toContain("cannot open store postgres://postgres:***@");
  expect(err.message).not.toContain(password);
}

// --- The tests -------------------------------------------------------------------------------

const describeTls = server ? describe : describe.skip;

describeTls("PostgreSQL over TLS (sslmode in the store's URL)", () => {
  test("verify-full with the server's CA, to the name on its certificate, connects over TLS and commits", async () => {
    const store = await openPgStore(tlsUrl({ sslmode: "verify-full", sslrootcert: server!.ca }));
    try {
      const name = `tls-${randomBytes(4).toString("hex")}`;
      const value = await store.tx(function* () {
        yield* run("INSERT INTO counters (name, value) VALUES (?, ?)", name, 41);
        yield* run("UPDATE counters SET value = value + 1 WHERE name = ?", name);
        return (yield* get<{ value: number }>("SELECT value FROM counters WHERE name = ?", name))?.value;
      });
      expect(value).toBe(42);
      expect(await store.read(get("SELECT value FROM counters WHERE name = ?", name))).toEqual({ value: 42 });
      // It is TLS (the server takes nothing else over TCP, but ask it anyway).
      const ssl = await store.read(get<{ ssl: boolean; version: string }>("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()"));
      expect(ssl?.ssl).toBe(true);
      expect(ssl?.version).toMatch(/^TLSv1\.[23]$/);
    } finally {
      await store.close();
    }
  });

  test("the server is strict: the password counts, and a connection without TLS is turned away", async () => {
    // So the refusals below are the client's doing, and the password in the URLs is a real one.
    const wrong = `not-${PASSWORD}`;
    const badPassword = await refusal(tlsUrl({ sslmode: "verify-full", sslrootcert: server!.ca }, { password: wrong }));
    expectRefused(badPassword, wrong);
    expect(badPassword.message).toContain("password authentication failed");
    const plain = await refusal(tlsUrl({ sslmode: "disable" }, { host: "127.0.0.1" }));
    expectRefused(plain);
    expect(plain.message).toContain("no encryption");
  });

  test("verify-full with another CA is refused, and says why without the password", async () => {
    const err = await refusal(tlsUrl({ sslmode: "verify-full", sslrootcert: server!.otherCa }));
    expectRefused(err);
    expect(err.message).toMatch(/certificate/i); // Bun: "unable to verify the first certificate"
    // verify-ca checks the CA just the same.
    const ca = await refusal(tlsUrl({ sslmode: "verify-ca", sslrootcert: server!.otherCa }));
    expectRefused(ca);
    // Without sslrootcert the system's CAs are used, and they do not know this private CA.
    expectRefused(await refusal(tlsUrl({ sslmode: "verify-full" })));
  });

  // By another loopback address the server listens on (skipped where 127.0.0.2 is not usable).
  test.skipIf(!server?.otherHost)("verify-full to a name the certificate does not have is refused, though the CA is right", async () => {
    const host = server!.otherHost!;
    const err = await refusal(tlsUrl({ sslmode: "verify-full", sslrootcert: server!.ca }, { host }));
    expectRefused(err);
    expect(err.message).toMatch(/altname|host ?name|certificate/i); // Bun: "Hostname/IP does not match certificate's altnames"
    // The same server, by the same address, with verify-ca (CA checked, name not) opens: the
    // refusal above is the host name check and nothing else.
    const store = await openPgStore(tlsUrl({ sslmode: "verify-ca", sslrootcert: server!.ca }, { host }));
    await store.close();
  });

  test("a daemon started with --store <verify-full URL> serves, and logs the URL with the password as ***", async () => {
    const url = tlsUrl({ sslmode: "verify-full", sslrootcert: server!.ca }, { db: DAEMON_DB });
    const d = await startDaemon({ db: url, env: { NODE_TLS_REJECT_UNAUTHORIZED: undefined } });
    try {
      expect(await d.call("increment_counter", { name: "tls" })).toEqual({ value: 1 });
      expect(await d.call("increment_counter", { name: "tls" })).toEqual({ value: 2 });
      const shown = `store postgres://postgres:***@localhost:${server!.port}/${DAEMON_DB}?sslmode=verify-full&sslrootcert=${server!.ca}`;
      expect(d.output()).toContain(shown);
      expect(d.output()).not.toContain(PASSWORD);
    } finally {
      await d.kill();
    }
  }, 20_000);

  test("a daemon given a verify-full URL with the wrong CA does not start, and does not print the password", async () => {
    const url = tlsUrl({ sslmode: "verify-full", sslrootcert: server!.otherCa }, { db: DAEMON_DB });
    const out = await runCli(["daemon", "--port", "0", "--socket", "off", "--store", url], { AIRLOCK_HOME: tempHome(), NODE_TLS_REJECT_UNAUTHORIZED: undefined }, 15_000);
    expect(out.code).not.toBe(0);
    expect(out.stdout + out.stderr).toContain("cannot open store postgres://postgres:***@localhost:");
    expect(out.stdout + out.stderr).not.toContain(PASSWORD);
  }, 20_000);
});

describe("sslmode=require against a server without TLS", () => {
  test("a stand-in that declines TLS (answers N to the SSLRequest) is refused", async () => {
    // What PostgreSQL with ssl=off answers; a client that asked for TLS must not go on without it.
    let startupSeen = false;
    const stub = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(sock, data) {
          const sslRequest = data.length === 8 && data.readUInt32BE(0) === 8 && data.readUInt32BE(4) === 80877103;
          if (sslRequest) sock.write("N");
          else {
            startupSeen = true; // the client went on in the clear
            sock.end();
          }
        },
      },
    });
    try {
      const err = await refusal(`postgres://postgres:${PASSWORD}@127.0.0.1:${stub.port}/postgres?sslmode=require`);
      expectRefused(err);
      expect(err.message).toContain("ERR_POSTGRES_TLS_NOT_AVAILABLE");
      expect(startupSeen).toBe(false);
    } finally {
      stub.stop(true);
    }
  });

  test.skipIf(!plainServer)(`a real PostgreSQL with ssl=off (AIRLOCK_TEST_PG, or ${DEV_PG}) is refused`, async () => {
    const url = new URL(withPassword(plainServer!));
    url.searchParams.set("sslmode", "require");
    const err = await refusal(url.toString());
    expectRefused(err);
    expect(err.message).toContain("ERR_POSTGRES_TLS_NOT_AVAILABLE"); // Bun: "Server does not support SSL"
    // verify-full is no different: no TLS, no connection.
    url.searchParams.set("sslmode", "verify-full");
    if (server) url.searchParams.set("sslrootcert", server.ca);
    expectRefused(await refusal(url.toString()));
  });
});

if (!plainServer) console.warn(`pg-tls.test.ts: no PostgreSQL without TLS at AIRLOCK_TEST_PG or ${DEV_PG}: the real-server sslmode=require case is skipped`);
