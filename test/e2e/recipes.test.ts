// The three curl recipes of Airlock v2's README, run as written with real curl and jq, plus
// the bearer header a Linux daemon requires, against a real daemon. Their documented answers
// are the wire contract every existing script relies on.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type DaemonProcess, startDaemon } from "../helpers/daemon.ts";
import { track, until } from "../helpers/until.ts";

// Bun's default is 5 s; a blocked waiter below may legitimately take longer when a test fails.
setDefaultTimeout(20_000);

let d: DaemonProcess;
beforeAll(async () => {
  d = await startDaemon(); // a fresh database: recipe (c) expects task id 1
});
afterAll(async () => {
  await d.kill();
});

// The README's `curl -s -X POST localhost:27183 -H 'Content-Type: application/json'`, pointed
// at this daemon's port and carrying the token.
const CURL = `curl -s -X POST localhost:$PORT -H 'Content-Type: application/json' -H "Authorization: Bearer $TOKEN"`;

function sh(script: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn(["/usr/bin/bash", "-c", `set -o pipefail\n${script}`], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(d.port), TOKEN: d.token ?? "", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(9), 60_000);
  const done = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]).then(([stdout, stderr, code]) => {
    clearTimeout(timer);
    return { stdout: stdout.trim(), stderr, code };
  });
  return done;
}

test("recipe (a): subagent B's identical blocking lock parks until A unlocks, then returns locked:true; unlock answers released:true", async () => {
  const lockA = `
A=$(${CURL} \\
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lock_resource","arguments":{"name":"file:/repo/package.json","agent_id":"sub-A","wait_seconds":50}}}' \\
  | jq -r '.result.content[0].text | fromjson | .lock_token')
echo "$A"`;
  const a = await sh(lockA);
  expect(a.code).toBe(0);
  const tokenA = a.stdout;
  expect(tokenA).toMatch(/^\S{16,}$/);
  expect(tokenA).not.toBe("null");

  const lockB = `${CURL} \\
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lock_resource","arguments":{"name":"file:/repo/package.json","agent_id":"sub-B","wait_seconds":50}}}' \\
  | jq -c '.result.content[0].text | fromjson'`;
  const b = track(sh(lockB));
  await until("sub-B parked on the lock", async () => {
    const locks = await d.call("list_locks");
    return locks[0]?.waiters?.some((w: { agent_id: string; blocked: boolean }) => w.agent_id === "sub-B" && w.blocked);
  });
  await Bun.sleep(100);
  expect(b.settled()).toBe(false);

  const unlockA = `${CURL} \\
  -d "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":2,\\"method\\":\\"tools/call\\",\\"params\\":{\\"name\\":\\"unlock_resource\\",\\"arguments\\":{\\"name\\":\\"file:/repo/package.json\\",\\"lock_token\\":\\"$A\\"}}}" \\
  | jq -c '.result.content[0].text | fromjson'`;
  const unlockedAt = performance.now();
  const u = await sh(unlockA, { A: tokenA });
  expect(u).toMatchObject({ code: 0, stdout: '{"released":true}' });

  const bOut = await b.promise;
  expect(bOut.code).toBe(0);
  expect(b.at() - unlockedAt).toBeLessThan(5000); // seconds, for a loaded machine: far inside B's 50 s wait
  const bResult = JSON.parse(bOut.stdout);
  expect(bResult).toMatchObject({ locked: true, lock_token: expect.any(String), expires_in_seconds: 900 });
  expect(bResult.lock_token).not.toBe(tokenA);
  expect(await d.call("list_locks")).toEqual([expect.objectContaining({ name: "file:/repo/package.json", agent_id: "sub-B" })]);
}, 20_000);

test("recipe (b): concurrent increment_counter migration-seq calls each answer {\"value\":N} with distinct N", async () => {
  const one = `${CURL} \\
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"increment_counter","arguments":{"name":"migration-seq"}}}' \\
  | jq -c '.result.content[0].text | fromjson'`;
  const r = await sh(`for i in $(seq 1 10); do (${one}) & done; wait`);
  expect(r.code).toBe(0);
  const lines = r.stdout.split("\n");
  expect(lines).toHaveLength(10);
  for (const l of lines) expect(l).toMatch(/^\{"value":\d+\}$/);
  const values = lines.map((l) => JSON.parse(l).value as number).sort((x, y) => x - y);
  expect(values).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
});

test("recipe (c): push_task answers {\"id\":1}, claim_next_task hands it over with a lease_token, complete_task answers completed:true", async () => {
  const producer = `${CURL} \\
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"push_task","arguments":{"queue":"build","payload":"compile module X","author":"planner"}}}' \\
  | jq -c '.result.content[0].text | fromjson'`;
  const p = await sh(producer);
  expect(p).toMatchObject({ code: 0, stdout: '{"id":1}' });

  const consumer = `
CLAIM=$(${CURL} \\
  -d '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim_next_task","arguments":{"queue":"build","agent_id":"worker-1"}}}' \\
  | jq -c '.result.content[0].text | fromjson')
echo "$CLAIM"
ID=$(echo "$CLAIM" | jq -r .id); TOK=$(echo "$CLAIM" | jq -r .lease_token)
# ...do the work...
${CURL} \\
  -d "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":3,\\"method\\":\\"tools/call\\",\\"params\\":{\\"name\\":\\"complete_task\\",\\"arguments\\":{\\"id\\":$ID,\\"lease_token\\":\\"$TOK\\"}}}" \\
  | jq -c '.result.content[0].text | fromjson'`;
  const c = await sh(consumer);
  expect(c.code).toBe(0);
  const [claimLine, completeLine] = c.stdout.split("\n");
  expect(JSON.parse(claimLine!)).toMatchObject({ claimed: true, id: 1, payload: "compile module X", lease_token: expect.any(String) });
  expect(completeLine).toBe('{"completed":true}');
  expect(await d.call("list_tasks", { queue: "build" })).toEqual([
    expect.objectContaining({ id: 1, payload: "compile module X", state: "done", author: "planner" }),
  ]);
});
