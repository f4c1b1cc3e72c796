// Call tasks (the MCP tasks extension, docs/tasks.md) against a blocked call's hand-off, over
// real HTTP against a real daemon process, alternating round by round so both see the same load:
// - hand-off: from sending unlock_resource to the blocked waiter's answer (bench/handoff.ts);
// - task: the tools/call that makes the task (answered with its handle), plus from sending
//   unlock_resource to the first tasks/get that reads it completed (sent as the unlock answers).
//   bun bench/call-tasks.ts [rounds=100] [durability=normal]
import { META, routing } from "../test/helpers/call-tasks.ts";
import { startDaemon } from "../test/helpers/daemon.ts";
import { warmUp } from "./warm-up.ts";
import { pct } from "./stats.ts";

const rounds = Number(process.argv[2] ?? 100);
const durability = process.argv[3] ?? "normal";
const d = await startDaemon({ args: ["--durability", durability] });

async function blockedBehind(name: string): Promise<void> {
  for (;;) {
    const l = ((await d.call("list_locks")) as any[]).find((x) => x.name === name);
    if (l?.waiters?.[0]?.blocked) return;
    await Bun.sleep(1);
  }
}

try {
  await warmUp(d);
  const handOffs: number[] = [];
  const tasks: number[] = [];
  let holder = await d.call("lock_resource", { name: "bench", agent_id: "h0" });
  let taskHolder = await d.call("lock_resource", { name: "bench-task", agent_id: "t0" });
  for (let i = 0; i < rounds; i++) {
    // A blocked call's hand-off.
    const waiter = d.call("lock_resource", { name: "bench", agent_id: `h${i + 1}`, wait_seconds: 50 });
    await blockedBehind("bench");
    const t0 = performance.now();
    const unlocked = d.call("unlock_resource", { name: "bench", lock_token: holder.lock_token });
    const got = await waiter;
    handOffs.push(performance.now() - t0);
    if (!(await unlocked).released || !got.locked) throw new Error(`round ${i}: hand-off failed`);
    holder = got;

    // A task: create, grant, get.
    const c0 = performance.now();
    const call = { name: "lock_resource", arguments: { name: "bench-task", agent_id: `t${i + 1}`, wait_seconds: 600 }, _meta: META };
    const created = (await d.rpc("tools/call", call, { headers: routing("tools/call", call.name) })).result;
    const createMs = performance.now() - c0;
    if (created.resultType !== "task") throw new Error(`round ${i}: no task (${JSON.stringify(created)})`);
    const g0 = performance.now();
    if (!(await d.call("unlock_resource", { name: "bench-task", lock_token: taskHolder.lock_token })).released) throw new Error(`round ${i}: unlock failed`);
    let done: any;
    for (;;) {
      done = (await d.rpc("tasks/get", { taskId: created.taskId, _meta: META }, { headers: routing("tasks/get", created.taskId) })).result;
      if (done.status !== "working") break;
    }
    tasks.push(createMs + (performance.now() - g0));
    const json = JSON.parse(done.result.content[0].text);
    if (!json.locked) throw new Error(`round ${i}: task not granted`);
    taskHolder = json;
  }
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  console.log(`durability ${durability}, ${rounds} rounds`);
  console.log(`blocked call's hand-off      p50 ${ms(pct(handOffs, 50))}  p99 ${ms(pct(handOffs, 99))}`);
  console.log(`task create + grant + get    p50 ${ms(pct(tasks, 50))}  p99 ${ms(pct(tasks, 99))}  = ${(pct(tasks, 50) / pct(handOffs, 50)).toFixed(2)}× the hand-off`);
} finally {
  await d.kill();
}
