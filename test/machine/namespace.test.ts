// The PID-namespace fact and the decision `airlock run` makes with it: bind the slot to a pid only
// when the daemon sees the same pids (same namespace, or neither has one); otherwise heartbeat.
import { describe, expect, test } from "bun:test";
import { existsSync, readlinkSync } from "node:fs";
import { type DaemonIdentity, holdingFor } from "../../src/cli/run.ts";
import { pidNamespace } from "../../src/machine/process.ts";

const HAS_NS = existsSync("/proc/self/ns/pid");
const HOST = "pid:[4026531836]";
const SANDBOX = "pid:[4026532511]";
const daemon = (pid_namespace: string | null): DaemonIdentity => ({ pid: 4242, pid_namespace, version: "0.0.0" });

describe("pidNamespace", () => {
  test.if(HAS_NS)("names this process's PID namespace as readlink /proc/self/ns/pid does", () => {
    const ns = pidNamespace();
    expect(ns).toMatch(/^pid:\[\d+\]$/);
    expect(ns).toBe(readlinkSync("/proc/self/ns/pid"));
  });

  test.if(HAS_NS)("is the same for a child started without a namespace of its own", async () => {
    const child = Bun.spawn(["sleep", "5"], { stdio: ["ignore", "ignore", "ignore"] });
    try {
      expect(readlinkSync(`/proc/${child.pid}/ns/pid`)).toBe(pidNamespace()!);
    } finally {
      child.kill(9);
      await child.exited;
    }
  });

  test.if(!HAS_NS)("is null where there are no PID namespaces (macOS)", () => {
    expect(pidNamespace()).toBeNull();
  });
});

describe("holdingFor", () => {
  test("binds by pid when the daemon is in the same PID namespace", () => {
    expect(holdingFor(HOST, daemon(HOST), true)).toEqual({ mode: "bound" });
  });

  test("holds by heartbeat when the daemon is in another PID namespace", () => {
    expect(holdingFor(SANDBOX, daemon(HOST), true)).toEqual({ mode: "heartbeat", why: "namespace" });
  });

  test("binds by pid when neither side has PID namespaces (macOS)", () => {
    expect(holdingFor(null, daemon(null), true)).toEqual({ mode: "bound" });
  });

  test("holds by heartbeat when only one side can name its namespace (no /proc in the sandbox, or another kernel)", () => {
    expect(holdingFor(null, daemon(HOST), true)).toEqual({ mode: "heartbeat", why: "namespace" });
    expect(holdingFor(SANDBOX, daemon(null), true)).toEqual({ mode: "heartbeat", why: "namespace" });
  });

  test("binds by pid, as before, when the daemon is too old to answer airlock/identity", () => {
    expect(holdingFor(SANDBOX, null, true)).toEqual({ mode: "bound" });
  });

  test("holds by heartbeat when asked (--no-pid-binding), whatever the namespaces", () => {
    expect(holdingFor(HOST, daemon(HOST), false)).toEqual({ mode: "heartbeat", why: "asked" });
    expect(holdingFor(null, null, false)).toEqual({ mode: "heartbeat", why: "asked" });
  });
});
