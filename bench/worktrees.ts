// Working trees (bench/run.ts's worktree figures, alone with `--only worktrees`): check_paths in a
// room where 50 agents have reported 20 touched, uncommitted files each (1,000 touched paths:
// `pkg-<a>/src/mod-<i>/file-<j>.ts`), against the same check in an empty room, timed alternately
// so both see the same moment of the machine. Two checks: a file nobody touched (the hook's
// usual edit), and a file another agent touched (the answer carries one edited_by).
import type { DaemonProcess } from "../test/helpers/daemon.ts";
import { paired } from "./pairing.ts";

type Add = (r: { mode: string; metric: string; value: number; unit: string; baseline?: string; baselineValue?: number }) => void;

const AGENTS = 50;
const PER_AGENT = 20;

export async function worktreeFigures(d: DaemonProcess, mode: string, add: Add, quick: boolean): Promise<void> {
  const room = "bench:worktrees:crowd";
  const empty = "bench:worktrees:empty";
  for (let a = 0; a < AGENTS; a++) {
    const files = Array.from({ length: PER_AGENT }, (_, i) => `pkg-${a}/src/mod-${i % 5}/file-${i}.ts`);
    await d.call("report_worktree", { agent_id: `agent-${a}`, room, branch: `feat-${a}`, dirty: files, touched: files });
  }
  const touched = (await d.call("list_worktrees", { room })).reduce((n: number, w: { touched: string[] }) => n + w.touched.length, 0);
  if (touched !== AGENTS * PER_AGENT) throw new Error(`bench setup: expected ${AGENTS * PER_AGENT} touched paths in ${room}, got ${touched}`);
  const check = (r: string, path: string, edited: number) => async () => {
    const out = await d.call("check_paths", { paths: [path], room: r, agent_id: "fresh" });
    if (!out.clear || (out.edited_by?.length ?? 0) !== edited) throw new Error(`bench: check_paths ${path} in ${r}: ${JSON.stringify(out)}`);
  };
  const reps = quick ? 200 : 1000;
  const figures: [string, () => Promise<void>, () => Promise<void>][] = [
    ["check_paths, a file nobody touched", check(room, "pkg-7/src/mod-9/index.ts", 0), check(empty, "pkg-7/src/mod-9/index.ts", 0)],
    ["check_paths, a file another agent touched (one edited_by)", check(room, "pkg-7/src/mod-3/file-3.ts", 1), check(empty, "pkg-7/src/mod-3/file-3.ts", 0)],
  ];
  for (const [what, crowded, bare] of figures) {
    for (let i = 0; i < 50; i++) await crowded();
    for (let i = 0; i < 50; i++) await bare();
    const [inEmpty, inCrowd] = await paired(reps, bare, crowded);
    add({ mode, metric: `${what}, empty room (p50)`, value: inEmpty, unit: "ms" });
    add({ mode, metric: `${what}, ${AGENTS * PER_AGENT} touched paths in the room (p50)`, value: inCrowd, unit: "ms", baseline: "same, empty room", baselineValue: inEmpty });
  }
  for (let a = 0; a < AGENTS; a++) await d.call("report_worktree", { agent_id: `agent-${a}`, room, dirty: [] });
}
