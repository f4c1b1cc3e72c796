// Exposure: who can reach the daemon and with what. File modes of the token, home and
// database; the bearer token in all its near-miss spellings; the Host × Origin matrix over a
// real socket (fetch would set Host itself); the 1 MiB body limit at its exact edge; and the
// bind address, which leaves loopback only when the user names another one, and then only
// with a token. All traffic goes to 127.0.0.1.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DaemonProcess, runCli, tempHome, useDaemonStarter } from "../helpers/daemon.ts";
import { MiB, rawHttp, rawRequest } from "./support.ts";

setDefaultTimeout(30_000);

const start = useDaemonStarter();

const mode = (path: string) => statSync(path).mode & 0o777;
const octal = (m: number) => m.toString(8).padStart(4, "0");
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const PONG = '{"jsonrpc":"2.0","id":1,"result":{}}';
const tally = { requests: 0, statuses: {} as Record<number, number> };
function count(status: number): number {
  tally.requests++;
  tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
  return status;
}

/** Starts `airlock daemon` expecting it to refuse; returns its output. */
async function refusedStart(home: string, args: string[] = [], env: Record<string, string> = {}): Promise<string> {
  const r = await runCli(["daemon", "--port", "0", "--db", join(home, "state.db"), ...args], { AIRLOCK_HOME: home, AIRLOCK_LOG: "info", ...env }, 10_000);
  expect(r.code).toBe(1);
  return r.stdout + r.stderr;
}

/** Listening TCP sockets on `port` from /proc/net/tcp{,6}, as "address:port" in hex. */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const out: string[] = [];
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === "0A" && cols[1]?.endsWith(`:${hexPort}`)) out.push(cols[1]);
    }
  }
  return out;
}

describe("files", () => {
  test("a fresh home gets a 0700 folder, a 64-hex 0600 token, and a 0600 database with 0600 -wal and -shm", async () => {
    const home = tempHome();
    const d = await start({ home });
    await d.call("set_note", { key: "k", value: "v" }); // the WAL has content
    const token = readFileSync(join(home, "token"), "utf8");
    expect(token).toMatch(/^[0-9a-f]{64}\n$/);
    expect(d.token).toBe(token.trim());
    const modes = Object.fromEntries(
      [home, join(home, "token"), d.db, `${d.db}-wal`, `${d.db}-shm`].map((p) => [p.slice(home.length) || "home", octal(mode(p))]),
    );
    expect(modes).toEqual({ home: "0700", "/token": "0600", "/state.db": "0600", "/state.db-wal": "0600", "/state.db-shm": "0600" });
  });

  test("an existing home open to others is tightened to 0700, and an existing 0644 database to 0600", async () => {
    const home = tempHome();
    mkdirSync(home, { recursive: true, mode: 0o755 });
    chmodSync(home, 0o755);
    const first = await start({ home });
    await first.kill();
    chmodSync(first.db, 0o644);
    chmodSync(home, 0o755);
    const d = await start({ home });
    expect(octal(mode(home))).toBe("0700");
    expect(octal(mode(d.db))).toBe("0600");
  });

  for (const m of [0o644, 0o640, 0o604]) {
    test(`a token file with mode ${octal(m)} makes the daemon refuse to start, saying chmod 600`, async () => {
      const home = tempHome();
      mkdirSync(home, { recursive: true, mode: 0o700 });
      const path = join(home, "token");
      writeFileSync(path, `${"a".repeat(64)}\n`);
      chmodSync(path, m);
      const out = await refusedStart(home);
      expect(out).toContain(`chmod 600 ${path}`);
      expect(out).not.toContain("listening on");
      expect(existsSync(join(home, "state.db"))).toBe(false); // refused before the database was touched
    });
  }

  for (const [what, content, m] of [
    ["an empty 0600 token file", "", 0o600],
    ["a whitespace-only 0600 token file", " \n\t\n", 0o600],
  ] as const) {
    test(`${what} makes the daemon refuse to start (never "auth off")`, async () => {
      const home = tempHome();
      mkdirSync(home, { recursive: true, mode: 0o700 });
      const path = join(home, "token");
      writeFileSync(path, content);
      chmodSync(path, m);
      const out = await refusedStart(home);
      expect(out).toContain(`the token file ${path} is empty`);
      expect(out).not.toContain("listening on");
    });
  }

  test("an empty token file that others can read is refused with the chmod 600 advice", async () => {
    const home = tempHome();
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const path = join(home, "token");
    writeFileSync(path, "");
    chmodSync(path, 0o644);
    expect(await refusedStart(home)).toContain(`chmod 600 ${path}`);
  });

  test("a token path that cannot be read as a file is refused with the chmod 600 advice", async () => {
    const home = tempHome();
    mkdirSync(join(home, "token"), { recursive: true, mode: 0o700 });
    expect(await refusedStart(home)).toContain(`chmod 600 ${join(home, "token")}`);
  });
});

describe("the bearer token", () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await start();
  });

  const head = (auth: string | null, extra: string[] = []) => [
    "POST / HTTP/1.1",
    `Host: 127.0.0.1:${d.port}`,
    "Content-Type: application/json",
    ...(auth === null ? [] : [`Authorization: ${auth}`]),
    ...extra,
  ];
  const send = async (auth: string | null, extra: string[] = []) => {
    const r = await rawHttp(d.port, rawRequest(head(auth, extra), PING));
    count(r.status);
    return r;
  };

  test("refused without it, with a wrong one, and with every near miss; accepted in every legal spelling", async () => {
    const t = d.token!;
    expect(t).toMatch(/^[0-9a-f]{64}$/);
    const cases: [string, string | null, number][] = [
      ["no Authorization header", null, 401],
      ["a wrong token", `Bearer ${"0".repeat(64)}`, 401],
      ["the token upper-cased", `Bearer ${t.toUpperCase()}`, 401],
      ["a 63-character prefix", `Bearer ${t.slice(0, 63)}`, 401],
      ["one character more", `Bearer ${t}0`, 401],
      ["the token twice", `Bearer ${t} ${t}`, 401],
      ["a literal backslash-n after it", `Bearer ${t}\\n`, 401],
      ["Bearer and nothing", "Bearer", 401],
      ["Bearer and a space", "Bearer ", 401],
      ["Bearer and spaces", "Bearer    ", 401],
      ["the token with no scheme", t, 401],
      ["Bearer glued to the token", `Bearer${t}`, 401],
      ["the Basic scheme", `Basic ${t}`, 401],
      ["the Token scheme", `Token ${t}`, 401],
      ["the token", `Bearer ${t}`, 200],
      ["a trailing space (optional whitespace around a header value)", `Bearer ${t} `, 200],
      ["a trailing tab", `Bearer ${t}\t`, 200],
      ["two spaces after the scheme", `Bearer  ${t}`, 200],
      ["lower-case scheme", `bearer ${t}`, 200],
      ["upper-case scheme", `BEARER ${t}`, 200],
      ["mixed-case scheme", `BeArEr ${t}`, 200],
    ];
    const got: Record<string, number> = {};
    const want: Record<string, number> = {};
    for (const [what, auth, status] of cases) {
      const r = await send(auth);
      got[what] = r.status;
      want[what] = status;
      if (r.status === 401) {
        expect(r.headers["www-authenticate"]).toBe("Bearer");
        expect(r.body).toContain("unauthorized");
      }
      if (r.status === 200) expect(r.body).toBe(PONG);
    }
    expect(got).toEqual(want);
  });

  test("a token read from the file with its newline still works (fetch trims header values)", async () => {
    const withNewline = readFileSync(join(d.home, "token"), "utf8");
    expect(withNewline.endsWith("\n")).toBe(true);
    const res = await fetch(`http://127.0.0.1:${d.port}/`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${withNewline}` }, body: PING });
    expect(count(res.status)).toBe(200);
  });

  test("two Authorization headers, one of them right, are refused", async () => {
    expect((await send(`Bearer ${"0".repeat(64)}`, [`Authorization: Bearer ${d.token}`])).status).toBe(401);
    expect((await send(`Bearer ${d.token}`, [`Authorization: Bearer ${"0".repeat(64)}`])).status).toBe(401);
  });

  test("/healthz needs no token; the guards run in the spec's order (Host, Origin, media type, token, size)", async () => {
    const h = await rawHttp(d.port, Buffer.from(`GET /healthz HTTP/1.1\r\nHost: localhost:${d.port}\r\nConnection: close\r\n\r\n`));
    expect([count(h.status), h.body]).toEqual([200, "ok"]);
    const order: [string[], string, number][] = [
      [["POST / HTTP/1.1", "Host: evil.com", "Origin: https://evil.com", "Content-Type: text/plain"], PING, 403],
      [["POST / HTTP/1.1", "Host: localhost", "Origin: https://evil.com", "Content-Type: text/plain"], PING, 403],
      [["POST / HTTP/1.1", "Host: localhost", "Content-Type: text/plain"], PING, 415],
      [["POST / HTTP/1.1", "Host: localhost", "Content-Type: application/json"], PING, 401],
      [["POST / HTTP/1.1", "Host: localhost", "Content-Type: application/json"], PING.padEnd(MiB + 1), 401],
      [["POST / HTTP/1.1", "Host: localhost", "Content-Type: application/json", `Authorization: Bearer ${d.token}`], PING.padEnd(MiB + 1), 413],
      [["GET / HTTP/1.1", "Host: evil.com"], "", 405],
      [["POST /nope HTTP/1.1", "Host: evil.com"], "", 404],
    ];
    for (const [h, body, want] of order) expect([h.join(" | "), count((await rawHttp(d.port, rawRequest(h, body))).status)]).toEqual([h.join(" | "), want]);
  });
});

describe("Host and Origin", () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await start();
  });

  test("the Host × Origin matrix over the real socket: 200 only for a loopback Host with no Origin or a loopback one", async () => {
    const p = d.port;
    const hosts: [string, boolean][] = [
      [`localhost:${p}`, true],
      ["localhost", true],
      [`LocalHost:${p}`, true],
      [`127.0.0.1:${p}`, true],
      ["127.0.0.1", true],
      [`[::1]:${p}`, true],
      ["[::1]", true],
      ["evil.com", false],
      [`evil.com:${p}`, false],
      ["localhost.evil.com", false],
      [`localhost.evil.com:${p}`, false],
      ["127.0.0.1.nip.io", false],
      [`127.0.0.1.nip.io:${p}`, false],
      ["127.0.0.2", false],
      ["0.0.0.0", false],
      ["::1", false], // an IPv6 literal in Host must be bracketed; unbracketed it is no host name
    ];
    const origins: [string | null, boolean][] = [
      [null, true],
      [`http://localhost:${p}`, true],
      ["http://127.0.0.1:5173", true],
      ["http://[::1]", true],
      ["https://localhost", true],
      ["https://evil.com", false],
      ["http://localhost.evil.com", false],
      ["http://127.0.0.1.nip.io", false],
      ["null", false],
      ["file://", false],
    ];
    const wrong: string[] = [];
    for (const [host, hostOk] of hosts) {
      for (const [origin, originOk] of origins) {
        const head = ["POST / HTTP/1.1", `Host: ${host}`, ...(origin === null ? [] : [`Origin: ${origin}`]), "Content-Type: application/json", `Authorization: Bearer ${d.token}`];
        const r = await rawHttp(p, rawRequest(head, PING));
        count(r.status);
        const want = hostOk && originOk ? 200 : 403;
        if (r.status !== want) wrong.push(`Host ${host}, Origin ${origin ?? "(none)"}: ${r.status} (want ${want})`);
        if (r.status === 200 && r.body !== PONG) wrong.push(`Host ${host}, Origin ${origin}: body ${r.body}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("/healthz checks Host too (DNS rebinding), but not Origin or the token", async () => {
    for (const [host, want] of [
      [`localhost:${d.port}`, 200],
      ["evil.com", 403],
      ["127.0.0.1.nip.io", 403],
    ] as const) {
      const r = await rawHttp(d.port, Buffer.from(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nOrigin: https://evil.com\r\nConnection: close\r\n\r\n`));
      expect([host, count(r.status)]).toEqual([host, want]);
    }
  });

  test("a missing, empty or malformed Host (no host[:port] with a numeric port) is refused with 403, never a 500", async () => {
    const wrong: string[] = [];
    const cases: [string, Uint8Array][] = [
      ["HTTP/1.0 GET /healthz with no Host", Buffer.from("GET /healthz HTTP/1.0\r\n\r\n")],
      ["HTTP/1.0 POST / with no Host", rawRequest(["POST / HTTP/1.0", "Content-Type: application/json", `Authorization: Bearer ${d.token}`], PING)],
      ...["", "user@localhost", "localhost/x", "a b", "[::1", "[::1]x", "localhost:abc", "localhost:80@evil.com", "127.0.0.1:-1"].map(
        (h): [string, Uint8Array] => [`Host ${JSON.stringify(h)}`, rawRequest(["POST / HTTP/1.1", `Host: ${h}`, "Content-Type: application/json", `Authorization: Bearer ${d.token}`], PING)],
      ),
    ];
    for (const [what, req] of cases) {
      const r = await rawHttp(d.port, req);
      count(r.status);
      if (r.status !== 403) wrong.push(`${what}: ${r.status} ${r.body}`);
    }
    expect(wrong).toEqual([]);
    expect(d.proc.exitCode).toBeNull();
  });
});

describe("the body limit", () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await start();
  });

  test("a body of exactly 1 MiB is accepted and one byte more is 413, with Content-Length and chunked", async () => {
    const exact = PING.padEnd(MiB, " "); // valid JSON: trailing whitespace
    const over = PING.padEnd(MiB + 1, " ");
    expect(Buffer.byteLength(exact)).toBe(MiB);
    const viaFetch = async (body: string) => {
      const res = await d.post(body);
      return [count(res.status), await res.text()];
    };
    expect(await viaFetch(exact)).toEqual([200, PONG]);
    expect(await viaFetch(over)).toEqual([413, "request body too large (limit 1 MiB)"]);
    // Multi-byte characters: the limit is on bytes, not characters.
    const wide = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${"é".repeat(MiB)}"}}`;
    expect(Buffer.byteLength(wide)).toBeGreaterThan(MiB);
    expect((await viaFetch(wide))[0]).toBe(413);
    // Chunked: no Content-Length to trust, the bytes are counted as they come.
    const chunked = (body: string) => {
      const chunks: string[] = [];
      for (let i = 0; i < body.length; i += 64 * 1024) {
        const c = body.slice(i, i + 64 * 1024);
        chunks.push(`${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`);
      }
      const head = ["POST / HTTP/1.1", `Host: localhost:${d.port}`, "Content-Type: application/json", `Authorization: Bearer ${d.token}`, "Transfer-Encoding: chunked", "Connection: close", "", ""];
      return Buffer.from(head.join("\r\n") + chunks.join("") + "0\r\n\r\n");
    };
    const a = await rawHttp(d.port, chunked(exact));
    expect([count(a.status), a.body]).toEqual([200, PONG]);
    const b = await rawHttp(d.port, chunked(over));
    expect(count(b.status)).toBe(413);
    // A Content-Length that claims more than 1 MiB is refused before any body is read.
    const c = await rawHttp(d.port, Buffer.from(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${d.token}\r\nContent-Length: ${MiB + 1}\r\nConnection: close\r\n\r\n{}`));
    expect(count(c.status)).toBe(413);
    expect(d.proc.exitCode).toBeNull();
  });
});

describe("the bind address", () => {
  test("without --host or AIRLOCK_HOST it listens on 127.0.0.1 only, whatever else the environment says", async () => {
    const d = await start({ env: { HOST: "0.0.0.0", BIND: "0.0.0.0", AIRLOCK_BIND: "0.0.0.0", AIRLOCK_ADDR: "0.0.0.0", AIRLOCK_LISTEN: "0.0.0.0" } });
    expect(d.url).toBe(`http://127.0.0.1:${d.port}`);
    expect(listeners(d.port)).toEqual([`0100007F:${d.port.toString(16).toUpperCase().padStart(4, "0")}`]);
  });

  for (const how of ["--host", "AIRLOCK_HOST"] as const) {
    test(`an explicit ${how} 0.0.0.0 binds beyond loopback, and then every request needs the token`, async () => {
      const home = tempHome();
      const d = await start(how === "--host" ? { home, args: ["--host", "0.0.0.0"] } : { home, env: { AIRLOCK_HOST: "0.0.0.0" } });
      expect(d.url).toBe(`http://0.0.0.0:${d.port}`);
      expect(d.output()).toContain("bearer token required");
      expect(listeners(d.port)).toContain(`00000000:${d.port.toString(16).toUpperCase().padStart(4, "0")}`);
      expect(readFileSync(join(home, "token"), "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
      const url = `http://127.0.0.1:${d.port}/`;
      const post = (headers: Record<string, string>) => fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: PING });
      expect(count((await post({})).status)).toBe(401);
      expect(count((await post({ authorization: "Bearer " })).status)).toBe(401);
      const ok = await post({ authorization: `Bearer ${d.token}` });
      expect([count(ok.status), await ok.text()]).toEqual([200, PONG]);
      // Still the DNS-rebinding defence: a foreign Host name is refused even with the token.
      const evil = await rawHttp(d.port, rawRequest(["POST / HTTP/1.1", "Host: evil.com", "Content-Type: application/json", `Authorization: Bearer ${d.token}`], PING));
      expect(count(evil.status)).toBe(403);
    });
  }

  test("an explicit --host 0.0.0.0 with a token file others can read refuses to start", async () => {
    const home = tempHome();
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, "token"), `${"b".repeat(64)}\n`);
    chmodSync(join(home, "token"), 0o644);
    expect(await refusedStart(home, ["--host", "0.0.0.0"])).toContain("chmod 600");
  });
});

afterAll(() => {
  console.log(`exposure: ${tally.requests} requests checked over the socket, status histogram ${JSON.stringify(tally.statuses)}`);
});
