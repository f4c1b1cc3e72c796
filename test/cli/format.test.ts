// `airlock status` draws the wait-for graph's cycles in the daemon's one meaning: a deadlock is a
// cycle whose agents are all blocked right now; a cycle through agents between calls is one that
// would deadlock if they blocked, naming them. Rendered from snapshots built by hand, so each
// kind (and an older daemon's undivided list) is shown exactly.
// Times are clock times, with their date only when it is not today.
import { describe, expect, test } from "bun:test";
import { clock, renderCycles, renderStatus } from "../../src/cli/format.ts";
import { wouldDeadlockLabel } from "../../src/domain/deadlock.ts";
import type { Snapshot, WaitGraphView } from "../../src/domain/snapshot.ts";

const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");
const step = (agent_id: string, waits_for: string, resource: string) => ({ agent_id, waits_for, resource });
const edge = (agent_id: string, waits_for: string, resource: string, blocked: boolean) => ({ agent_id, waits_for, resource, kind: "lock" as const, blocked });

function snapshot(graph: WaitGraphView): Snapshot {
  return { source: "daemon", revision: 7, locks: [], agents: [], queues: [], events: [], notes: 0, counters: [], pools: [], claims: [], graph, journal: [] };
}

describe("status: the two kinds of cycle", () => {
  test("a deadlock is drawn as one; a cycle through an agent between calls says which agent would close it", () => {
    const out = plain(
      renderStatus(
        snapshot({
          edges: [edge("a", "b", "y", false), edge("b", "a", "x", true), edge("c", "d", "z", true), edge("d", "c", "w", true)],
          deadlocks: [{ cycle: [step("c", "d", "z"), step("d", "c", "w")] }],
          would_deadlock: [{ cycle: [step("a", "b", "y"), step("b", "a", "x")], between_calls: ["a"] }],
        }),
        "here",
      ),
    );
    const waits = out.slice(out.indexOf("WAITS"), out.indexOf("QUEUES"));
    expect(waits).toContain("WAITS (4)\n  deadlock: c → (z) → d → (w) → c\n  cycle that would deadlock if a blocks: a → (y) → b → (x) → a\n");
    expect(waits).toContain("a → b  lock y, between calls");
    expect(waits.match(/deadlock: /g)).toHaveLength(1); // the accepted cycle is not called a deadlock
  });

  test("a cycle whose agents are all between calls is flagged, naming every one of them", () => {
    const lines = renderCycles({
      edges: [edge("a", "b", "y", false), edge("b", "c", "x", false), edge("c", "a", "v", false)],
      deadlocks: [],
      would_deadlock: [{ cycle: [step("a", "b", "y"), step("b", "c", "x"), step("c", "a", "v")], between_calls: ["a", "b", "c"] }],
    }).map(plain);
    expect(lines).toEqual(["cycle that would deadlock if a, b and c block: a → (y) → b → (x) → c → (v) → a"]);
    expect(wouldDeadlockLabel(["a", "b"])).toBe("cycle that would deadlock if a and b block");
  });

  test("no cycle, no line", () => {
    expect(renderCycles({ edges: [edge("a", "b", "y", true)], deadlocks: [], would_deadlock: [] })).toEqual([]);
  });

  test("an older daemon's undivided cycles are shown without calling them deadlocks", () => {
    const old = { edges: [], cycles: [[step("a", "b", "y"), step("b", "a", "x")]] } as unknown as WaitGraphView;
    expect(renderCycles(old).map(plain)).toEqual(["cycle: a → (y) → b → (x) → a  (an older daemon: blocked or between calls unknown)"]);
  });
});

describe("clock times", () => {
  test("a time of today is its clock time; one of another day (either side of midnight) carries its date", () => {
    const now = new Date(2026, 11, 1, 23, 58, 32);
    expect(clock(new Date(2026, 11, 1, 23, 59, 0).getTime(), now)).toBe("23:59:00");
    expect(clock(new Date(2026, 11, 2, 0, 0, 32).getTime(), now)).toBe("2026-12-02 00:00:32");
    expect(clock(new Date(2026, 10, 30, 9, 5, 7).getTime(), now)).toBe("2026-11-30 09:05:07");
  });
});
