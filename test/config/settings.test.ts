// Daemon settings: flags over the environment over defaults, strict port parsing, and which
// bind addresses count as loopback.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_HOST, DEFAULT_PORT, isLoopbackHost, parsePort, resolveSettings, boundHostNames, DEFAULT_DURABILITY } from "../../src/config/settings.ts";
import { AirlockError } from "../../src/errors.ts";

const KEYS = [
  "AIRLOCK_DURABILITY",
  "AIRLOCK_PORT",
  "AIRLOCK_HOST",
  "AIRLOCK_DB",
  "AIRLOCK_SOCKET",
  "AIRLOCK_JOURNAL_DAYS",
  "AIRLOCK_JOURNAL_MAX",
  "AIRLOCK_STORE",
  "AIRLOCK_STORE_FILE",
] as const;
let saved: Record<string, string | undefined>;

beforeEach(() => {
  saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
  for (const k of KEYS) delete process.env[k];
});

afterEach(() => {
  for (const k of KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe("resolveSettings", () => {
  test("defaults to 127.0.0.1:27183 and state.db under the airlock home", () => {
    const s = resolveSettings({});
    expect(s).toEqual({
      host: DEFAULT_HOST,
      port: DEFAULT_PORT,
      hostExplicit: false,
      dbPath: join(process.env.AIRLOCK_HOME!, "state.db"),
      store: undefined,
      durability: DEFAULT_DURABILITY,
      socket: join(process.env.AIRLOCK_HOME!, "airlock.sock"),
      socketExplicit: false,
      journalDays: undefined,
      journalMax: undefined,
      hostGoneSeconds: undefined,
    });
    expect(DEFAULT_PORT).toBe(27183);
    expect(DEFAULT_HOST).toBe("127.0.0.1");
  });

  test("the environment overrides the defaults", () => {
    process.env.AIRLOCK_PORT = "4000";
    process.env.AIRLOCK_HOST = "::1";
    process.env.AIRLOCK_DB = "/tmp/x.db";
    process.env.AIRLOCK_DURABILITY = "NORMAL";
    process.env.AIRLOCK_SOCKET = "/run/airlock.sock";
    process.env.AIRLOCK_JOURNAL_DAYS = "1.5";
    process.env.AIRLOCK_JOURNAL_MAX = "500";
    expect(resolveSettings({})).toEqual({
      host: "::1",
      port: 4000,
      hostExplicit: true,
      dbPath: "/tmp/x.db",
      store: undefined,
      durability: "normal",
      socket: "/run/airlock.sock",
      socketExplicit: true,
      journalDays: 1.5,
      journalMax: 500,
      hostGoneSeconds: undefined,
    });
  });

  test("journal retention from the environment must be positive", () => {
    process.env.AIRLOCK_JOURNAL_MAX = "0";
    expect(() => resolveSettings({})).toThrow(/AIRLOCK_JOURNAL_MAX must be a positive whole number/);
    process.env.AIRLOCK_JOURNAL_MAX = "10";
    process.env.AIRLOCK_JOURNAL_DAYS = "week";
    expect(() => resolveSettings({})).toThrow(/AIRLOCK_JOURNAL_DAYS must be a positive number/);
  });

  test("flags override the environment", () => {
    process.env.AIRLOCK_PORT = "4000";
    process.env.AIRLOCK_HOST = "localhost";
    process.env.AIRLOCK_DURABILITY = "normal";
    process.env.AIRLOCK_SOCKET = "/run/airlock.sock";
    expect(resolveSettings({ port: "5000", host: "127.0.0.1", db: "/tmp/y.db", durability: "full", socket: "/tmp/a.sock" })).toEqual({
      host: "127.0.0.1",
      port: 5000,
      hostExplicit: true,
      dbPath: "/tmp/y.db",
      store: undefined,
      durability: "full",
      socket: "/tmp/a.sock",
      socketExplicit: true,
      journalDays: undefined,
      journalMax: undefined,
      hostGoneSeconds: undefined,
    });
  });

  test("the socket is turned off by --socket off, --socket '' or AIRLOCK_SOCKET=off, and a relative path is made absolute", () => {
    expect(resolveSettings({ socket: "off" }).socket).toBeNull();
    expect(resolveSettings({ socket: "" }).socket).toBeNull();
    process.env.AIRLOCK_SOCKET = "OFF";
    expect(resolveSettings({}).socket).toBeNull();
    expect(resolveSettings({ socket: "rel/a.sock" }).socket).toBe(join(process.cwd(), "rel/a.sock"));
  });

  test("port 0 (any free port) is allowed, for tests", () => {
    expect(resolveSettings({ port: "0" }).port).toBe(0);
  });

  test("a bad AIRLOCK_PORT is refused, naming the variable", () => {
    process.env.AIRLOCK_PORT = "http";
    expect(() => resolveSettings({})).toThrow(/AIRLOCK_PORT must be a port number/);
  });

  test("a bad --port is refused, naming the flag", () => {
    expect(() => resolveSettings({ port: "99999" })).toThrow(/--port must be a port number from 0 to 65535 \(got "99999"\)/);
  });
});

describe("parsePort", () => {
  for (const [raw, n] of [["1", 1], ["80", 80], ["27183", 27183], ["65535", 65535], [8080, 8080], ["0", 0]] as const) {
    test(`accepts ${JSON.stringify(raw)} as ${n}`, () => {
      expect(parsePort(raw, "--port")).toBe(n);
    });
  }

  for (const raw of ["", " ", "-1", "65536", "1.5", "abc", "80abc", "1e3", "0x50", "NaN", "Infinity", -1, 1.5, 70000]) {
    test(`refuses ${JSON.stringify(raw)} with an AirlockError`, () => {
      expect(() => parsePort(raw, "--port")).toThrow(AirlockError);
    });
  }
});

describe("isLoopbackHost", () => {
  for (const h of ["127.0.0.1", "localhost", "LOCALHOST", "::1", "[::1]", "127.0.0.2", "127.255.255.254"]) {
    test(`${h} is loopback`, () => {
      expect(isLoopbackHost(h)).toBe(true);
    });
  }
  for (const h of ["0.0.0.0", "::", "192.168.1.5", "127.0.0.1.nip.io", "localhost.evil.com", "128.0.0.1", "", "fd00::1"]) {
    test(`${JSON.stringify(h)} is not loopback`, () => {
      expect(isLoopbackHost(h)).toBe(false);
    });
  }
});

describe("Host names a bound daemon answers", () => {
  const machine = { addresses: ["127.0.0.1", "10.1.2.3", "fe80::1"], hostname: "Devbox" };
  test("a specific address answers its own name, even a loopback one like 127.0.0.2", () => {
    expect(boundHostNames("127.0.0.2", machine)).toEqual(["127.0.0.2"]);
    expect(boundHostNames("192.168.5.9", machine)).toEqual(["192.168.5.9"]);
    expect(boundHostNames("[FD00::1]", machine)).toEqual(["fd00::1"]);
  });
  test("a wildcard bind answers every address of the machine and its host name", () => {
    expect(boundHostNames("0.0.0.0", machine)).toEqual(["127.0.0.1", "10.1.2.3", "fe80::1", "devbox"]);
    expect(boundHostNames("::", machine)).toContain("10.1.2.3");
  });
});

describe("durability", () => {
  test("an unknown mode is refused, naming the flag or variable and the choices", () => {
    expect(() => resolveSettings({ durability: "fast" })).toThrow('--durability must be one of normal, full (got "fast")');
    process.env.AIRLOCK_DURABILITY = "sync";
    expect(() => resolveSettings({})).toThrow("AIRLOCK_DURABILITY must be one of normal, full");
  });
});

describe("the shared store (--store, AIRLOCK_STORE, AIRLOCK_STORE_FILE)", () => {
  const URL_WITH_PASSWORD = "postgres://airlock:s3cret@db.example:5432/airlock?sslmode=verify-full";
  const errorOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error("expected a refusal");
  };

  test("unset: the SQLite file; --store wins over AIRLOCK_STORE, which wins over AIRLOCK_STORE_FILE", () => {
    expect(resolveSettings({}).store).toBeUndefined();
    const file = join(mkdtempSync(join(tmpdir(), "airlock-store-")), "url");
    writeFileSync(file, "postgresql://from-file/db\n", { mode: 0o600 });
    process.env.AIRLOCK_STORE_FILE = file;
    expect(resolveSettings({}).store).toBe("postgresql://from-file/db");
    process.env.AIRLOCK_STORE = URL_WITH_PASSWORD;
    expect(resolveSettings({}).store).toBe(URL_WITH_PASSWORD);
    expect(resolveSettings({ store: "postgres://flag/db" }).store).toBe("postgres://flag/db");
    expect(resolveSettings({ store: "sqlite" }).store).toBeUndefined(); // the default, said out loud
  });

  test("a file others can read is refused, as ssh refuses a key", () => {
    const file = join(mkdtempSync(join(tmpdir(), "airlock-store-")), "url");
    writeFileSync(file, URL_WITH_PASSWORD);
    chmodSync(file, 0o644);
    process.env.AIRLOCK_STORE_FILE = file;
    const msg = errorOf(() => resolveSettings({}));
    expect(msg).toContain("is readable by other users; chmod 600 it");
    expect(msg).not.toContain("s3cret");
  });

  test("anything but a postgres URL is refused without repeating the value (it may hold a password)", () => {
    const msg = errorOf(() => resolveSettings({ store: "mysql://root:s3cret@db/airlock" }));
    expect(msg).toBe('--store must be a postgres:// or postgresql:// URL (or "sqlite")');
    process.env.AIRLOCK_STORE = "http://s3cret@x";
    expect(errorOf(() => resolveSettings({}))).toContain("AIRLOCK_STORE must be");
    expect(errorOf(() => resolveSettings({}))).not.toContain("s3cret");
  });

  test("--db with a shared store is ambiguous and refused", () => {
    expect(errorOf(() => resolveSettings({ db: "/tmp/x.db", store: URL_WITH_PASSWORD }))).toBe("--db and --store both choose where the state lives; give one");
  });
});
