import { expect, test } from "bun:test";
import { useDaemon } from "../helpers/daemon.ts";

const d = useDaemon();

test("a started daemon answers healthz and a tool call with its generated token", async () => {
  const h = await fetch(`${d.url}/healthz`);
  expect(h.status).toBe(200);
  expect(await h.text()).toBe("ok");
  expect(d.token).toMatch(/^[0-9a-f]{64}$/);
  expect(await d.call("increment_counter", { name: "smoke" })).toEqual({ value: 1 });
});
