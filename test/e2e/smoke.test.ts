import { afterAll, beforeAll, expect, test } from "bun:test";
import { type DaemonProcess, startDaemon } from "../helpers/daemon.ts";

let d: DaemonProcess;
beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d.kill();
});

test("a started daemon answers healthz and a tool call with its generated token", async () => {
  const h = await fetch(`${d.url}/healthz`);
  expect(h.status).toBe(200);
  expect(await h.text()).toBe("ok");
  expect(d.token).toMatch(/^[0-9a-f]{64}$/);
  expect(await d.call("increment_counter", { name: "smoke" })).toEqual({ value: 1 });
});
