// The status snapshot's agent rows: each registered agent lists what it holds and waits for
// (its locks, claimed tasks, slots, path claims, waits), its own and no other's, in the order
// of the lists they come from; an agent holding nothing lists nothing.
import { expect, setDefaultTimeout, test } from "bun:test";
import { useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();

test("each agent row lists its own locks, tasks, slots, claims and waits, in the lists' order", async () => {
  for (const agent of ["ada", "bob", "cy"]) expect((await d.call("register_agent", { agent_id: agent, ttl_seconds: 600 })).isError).toBeUndefined();
  await d.call("configure_pool", { pool: "gpu", capacity: 2, expected_version: 0, author: "test", reason: "two gpus" });
  for (const [name, agent] of [["zeta", "ada"], ["alpha", "ada"], ["mid", "bob"]] as const) {
    expect((await d.call("lock_resource", { name, agent_id: agent, ttl_seconds: 600 })).locked).toBe(true);
  }
  expect((await d.call("acquire_slot", { agent_id: "bob", pool: "gpu", weight: 2 })).granted).toBe(true);
  const first = await d.call("push_task", { queue: "build", payload: "one" });
  const second = await d.call("push_task", { queue: "build", payload: "two" });
  expect((await d.call("claim_next_task", { queue: "build", agent_id: "ada" })).id).toBe(first.id);
  expect((await d.call("claim_next_task", { queue: "build", agent_id: "ada" })).id).toBe(second.id);
  expect((await d.call("claim_paths", { agent_id: "ada", paths: ["src/api/**"], room: "one" })).granted).toBe(true);
  expect((await d.call("claim_paths", { agent_id: "bob", paths: ["docs/*.md"], room: "one" })).granted).toBe(true);
  expect((await d.call("claim_paths", { agent_id: "ada", paths: ["web/**"], room: "two" })).granted).toBe(true);
  // bob waits for ada's lock.
  const waiting = d.call("lock_resource", { name: "alpha", agent_id: "bob", ttl_seconds: 60, wait_seconds: 20 });
  let s: any;
  await until("bob blocked", async () => {
    s = (await d.rpc("airlock/status", {})).result;
    return s.graph.edges.length > 0;
  });
  const rows = Object.fromEntries(s.agents.map((a: any) => [a.agent_id, { ...a, expires_in_seconds: undefined }]));
  expect(Object.keys(rows)).toEqual(["ada", "bob", "cy"]);
  expect(rows.ada).toMatchObject({
    locks: ["alpha", "zeta"],
    tasks: [first.id, second.id],
    slots: [],
    claims: [
      { room: "one", paths: ["src/api/**"] },
      { room: "two", paths: ["web/**"] },
    ],
    waiting_for: [],
  });
  expect(rows.bob).toMatchObject({
    locks: ["mid"],
    tasks: [],
    slots: [{ pool: "gpu", weight: 2 }],
    claims: [{ room: "one", paths: ["docs/*.md"] }],
    waiting_for: [{ kind: "lock", resource: "alpha", blocked_by: ["ada"], blocked: true }],
  });
  expect(rows.cy).toMatchObject({ locks: [], tasks: [], slots: [], claims: [], waiting_for: [] });
  expect((await d.call("unlock_resource", { name: "alpha", agent_id: "ada" })).isError).toBeUndefined();
  expect((await waiting).locked).toBe(true);
});
