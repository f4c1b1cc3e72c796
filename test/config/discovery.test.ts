// The lookup order (SPEC §8) and daemon.json's reading and writing, without a daemon: a record
// whose pid is this test process is "alive", one whose pid is a reaped child is "gone".
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  clientUrl,
  daemonFilePath,
  type DaemonRecord,
  discoveredPort,
  lookup,
  readDaemonFile,
  removeDaemonFile,
  writeDaemonFile,
} from "../../src/config/discovery.ts";

const home = () => mkdtempSync(join(tmpdir(), "airlock-discovery-unit-"));

function record(pid: number, port: number): DaemonRecord {
  return { format: 1, pid, host: "127.0.0.1", port, url: clientUrl("127.0.0.1", port), socket: null, version: "0.0.0", started_at: new Date().toISOString(), auth: true, pid_namespace: null };
}

/** A pid that existed and is gone: a child that has exited and been reaped. */
function deadPid(): number {
  const p = Bun.spawnSync(["true"]);
  return p.pid;
}

const saved = { port: process.env.AIRLOCK_PORT, socket: process.env.AIRLOCK_SOCKET };
afterEach(() => {
  for (const [k, v] of [["AIRLOCK_PORT", saved.port], ["AIRLOCK_SOCKET", saved.socket]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe("lookup", () => {
  test("with nothing chosen and no file, the default port is the only place", () => {
    const l = lookup({ home: home() });
    expect(l.explicit).toBe(false);
    expect(l.candidates.map((c) => [c.via, c.where])).toEqual([["default port", "http://127.0.0.1:27183"]]);
    expect(l.skipped).toEqual(["no daemon.json", "no socket"]);
  });

  test("a live daemon.json comes first, before the default port", () => {
    const h = home();
    writeDaemonFile(record(process.pid, 5555), daemonFilePath(h));
    const l = lookup({ home: h });
    expect(l.candidates.map((c) => c.where)).toEqual(["http://127.0.0.1:5555", "http://127.0.0.1:27183"]);
    expect(l.candidates[0]).toMatchObject({ via: "daemon.json", pid: process.pid });
    expect(discoveredPort(h)).toBe(5555);
  });

  test("a daemon.json whose pid is gone is skipped and said so", () => {
    const h = home();
    const pid = deadPid();
    writeDaemonFile(record(pid, 5555), daemonFilePath(h));
    const l = lookup({ home: h });
    expect(l.candidates.map((c) => c.via)).toEqual(["default port"]);
    expect(l.skipped[0]).toBe(`daemon.json names pid ${pid}, which is gone`);
    expect(discoveredPort(h)).toBe(27183);
  });

  test("--port, then AIRLOCK_SOCKET and AIRLOCK_PORT, are the only places when given", () => {
    const h = home();
    writeDaemonFile(record(process.pid, 5555), daemonFilePath(h));
    expect(lookup({ home: h, port: "6000" }).candidates.map((c) => c.where)).toEqual(["http://127.0.0.1:6000"]);
    process.env.AIRLOCK_PORT = "7000";
    process.env.AIRLOCK_SOCKET = "/tmp/some.sock";
    expect(lookup({ home: h }).candidates.map((c) => [c.via, c.where])).toEqual([
      ["AIRLOCK_SOCKET", "the socket /tmp/some.sock"],
      ["AIRLOCK_PORT", "http://127.0.0.1:7000"],
    ]);
    expect(lookup({ home: h, port: "6000" }).candidates.map((c) => c.via)).toEqual(["--port"]); // a flag asks for TCP
    expect(discoveredPort(h)).toBe(7000);
    // all: the implicit places too, after the chosen ones (what doctor probes).
    expect(lookup({ home: h, all: true }).candidates.map((c) => c.via)).toEqual(["AIRLOCK_SOCKET", "AIRLOCK_PORT", "daemon.json", "default port"]);
  });
});

describe("daemon.json", () => {
  test("is written 0600 and read back; removal leaves another daemon's record alone", () => {
    const path = daemonFilePath(home());
    writeDaemonFile(record(process.pid, 5555), path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readDaemonFile(path)).toMatchObject({ pid: process.pid, port: 5555, url: "http://127.0.0.1:5555" });
    removeDaemonFile(process.pid + 1, path);
    expect(readDaemonFile(path)?.pid).toBe(process.pid);
    removeDaemonFile(process.pid, path);
    expect(readDaemonFile(path)).toBeUndefined();
  });

  test("a file that is not a record reads as none", () => {
    const path = daemonFilePath(home());
    for (const text of ["", "{", "[]", '{"format":2,"pid":1,"port":1,"url":"http://x"}', '{"format":1,"pid":"1","port":1,"url":"http://x"}']) {
      writeFileSync(path, text);
      expect(readDaemonFile(path)).toBeUndefined();
    }
  });

  test("a file others may write is refused: clients send the token where it points", () => {
    const path = daemonFilePath(home());
    writeDaemonFile(record(process.pid, 5555), path);
    chmodSync(path, 0o620);
    expect(readDaemonFile(path)).toBeUndefined();
    chmodSync(path, 0o644); // readable is fine: it holds no secret
    expect(readDaemonFile(path)?.port).toBe(5555);
  });

  test("a wildcard bind is reached on loopback", () => {
    expect(clientUrl("0.0.0.0", 1)).toBe("http://127.0.0.1:1");
    expect(clientUrl("::", 1)).toBe("http://[::1]:1");
    expect(clientUrl("[::1]", 1)).toBe("http://[::1]:1");
  });
});
