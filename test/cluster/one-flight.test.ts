// A row batch in one flight (docs/cluster.md): a batch of counters on a shared store is sent with
// its journal entries and its COMMIT together, so a hot counter's row is locked for the server's
// work alone. The batch still hands out every value once, records each with its own value, and a
// counter the schema refuses (past the exact integer range) fails alone: the others of its batch
// commit, once. Skipped without a server (AIRLOCK_TEST_PG).
import { expect, setDefaultTimeout, test } from "bun:test";
import { withTracedPair } from "../helpers/cluster.ts";
import { type DaemonProcess, storeQuery } from "../helpers/daemon.ts";
import { describePg } from "../helpers/pg.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

const CLIENTS = 16;
/** The blocked calls' wait: far longer than the test lets them take (they must be woken, not time out). */
const WAIT_S = 30;
const ROUNDS = 10;

type Change = { kind: string; resource: string; value?: number; by?: number; revision: number };

/** Every counter.changed entry of the journal after `since`, read on `d` page by page. */
async function counterChanges(d: DaemonProcess, since = 0): Promise<Change[]> {
  const out: Change[] = [];
  for (let from = since; ; ) {
    const w = await d.call("watch_changes", { since_revision: from, kinds: ["counter.changed"], limit: 500 });
    out.push(...(w.changes as Change[]));
    if (w.changes.length === 0 || w.revision === from) return out;
    from = w.revision as number;
  }
}

describePg("a row batch in one flight", () => {
  test("clients of two daemons share a hot counter: every value once, each recorded with its own value, and batches commit in their flight", async () => {
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      const from = Date.now();
      const got = await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          const d = c % 2 === 0 ? d1 : d2;
          const values: number[] = [];
          for (let r = 0; r < ROUNDS; r++) {
            const a = await d.call("increment_counter", { name: "flight-hot", by: 1 });
            const b = await d.call("increment_counter", { name: `flight-own-${c}`, by: 2 });
            expect(b.value).toBe(2 * (r + 1));
            values.push(a.value as number);
          }
          return values;
        }),
      );
      return { from, to: Date.now(), values: got.flat(), changes: await counterChanges(d2) };
    });
    const n = CLIENTS * ROUNDS;
    expect([...value.values].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    // The entries of the hot counter: one per increment, each with the value it handed out, in
    // the order of the journal (a row's lock orders the writes, and each entry is written in its
    // writer's transaction right after the row).
    const hot = value.changes.filter((e) => e.resource === "flight-hot");
    expect(hot.map((e) => [e.value, e.by])).toEqual(Array.from({ length: n }, (_, i) => [i + 1, 1]));
    for (let c = 0; c < CLIENTS; c++) {
      expect(value.changes.filter((e) => e.resource === `flight-own-${c}`).map((e) => e.value)).toEqual(Array.from({ length: ROUNDS }, (_, r) => 2 * (r + 1)));
    }
    // The traced daemon's batches of counters were committed in their flight (its eight clients
    // call side by side, so some batches hold several), and none was committed another way.
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.length).toBeGreaterThan(0);
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });

  test("a counter the schema refuses fails alone: the others of its batch commit once, and it is unchanged", async () => {
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      expect((await d2.call("increment_counter", { name: "flight-edge", by: Number.MAX_SAFE_INTEGER })).value).toBe(Number.MAX_SAFE_INTEGER);
      const from = Date.now();
      const rounds: { refused: string; others: number[] }[] = [];
      for (let r = 0; r < 5; r++) {
        // Asked for together, so they run in one batch or a few: the refused one among them.
        const calls = Array.from({ length: 8 }, (_, c) => d2.call("increment_counter", { name: c === 3 ? "flight-edge" : `flight-ok-${c}` }));
        const answers = await Promise.all(calls);
        const refused = answers[3]!;
        expect(refused.isError).toBe(true);
        rounds.push({ refused: JSON.stringify(refused), others: answers.filter((_, c) => c !== 3).map((a) => a.value as number) });
      }
      const edge = await d1.call("increment_counter", { name: "flight-edge", by: 0 });
      return { from, to: Date.now(), rounds, edge: edge.value as number, changes: await counterChanges(d1) };
    });
    // A batch that held the refused one was run again without it: a flight of k bodies right
    // after one of k + 1 (five rounds of seven side by side: the refused one was batched in some).
    const flights = labels(value.from, value.to)
      .filter((l) => l.startsWith("commit in flight "))
      .map((l) => Number(l.slice("commit in flight ".length)));
    expect(flights.some((k, i) => i > 0 && flights[i - 1] === k + 1)).toBe(true);
    for (const [r, round] of value.rounds.entries()) {
      expect(round.refused).toContain("exact integer range");
      expect(round.others).toEqual(Array.from({ length: 7 }, () => r + 1));
    }
    expect(value.edge).toBe(Number.MAX_SAFE_INTEGER);
    // Each counter recorded once per increment that committed, and the refused ones not at all.
    expect(value.changes.filter((e) => e.resource === "flight-edge").map((e) => e.value)).toEqual([Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
    for (const c of [0, 1, 2, 4, 5, 6, 7]) expect(value.changes.filter((e) => e.resource === `flight-ok-${c}`).map((e) => e.value)).toEqual([1, 2, 3, 4, 5]);
  });
  test("heartbeats of live agents commit in their flight too; a first registration among them is recorded once, and a role a heartbeat names is kept", async () => {
    const AGENTS = 16;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      for (let a = 0; a < AGENTS; a++) expect((await d1.call("register_agent", { agent_id: `beat-${a}`, ttl_seconds: 60 })).registered).toBe(true);
      const since = (await d2.call("watch_changes", { kinds: ["agent."] })).revision as number;
      const from = Date.now();
      // Each agent beats on the traced daemon five times, side by side with the others, the
      // last beat naming a role; a new agent registers among them.
      for (let r = 0; r < 5; r++) {
        const beats = Array.from({ length: AGENTS }, (_, a) => d2.call("register_agent", { agent_id: `beat-${a}`, ttl_seconds: 120, ...(r === 4 ? { role: `role-${a}` } : {}) }));
        const fresh = d2.call("register_agent", { agent_id: `new-${r}`, ttl_seconds: 120 });
        // The expiry in whole seconds, within a few of the TTL however long the call took.
        for (const b of await Promise.all([...beats, fresh])) expect([b.registered, b.expires_in_seconds > 115 && b.expires_in_seconds <= 120]).toEqual([true, true]);
      }
      const to = Date.now();
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["agent."], limit: 100 })).changes as Change[];
      const agents = (await d1.call("list_agents")) as { agent_id: string; role: string | null; expires_in_seconds: number }[];
      return { from, to, changes, agents };
    });
    // Only the new agents were recorded registered, each once.
    expect(value.changes.map((e) => `${e.kind} ${e.resource}`)).toEqual(Array.from({ length: 5 }, (_, r) => `agent.registered new-${r}`));
    // Every heartbeat moved its agent's expiry (60 s before) and the last one set its role.
    const beating = value.agents.filter((a) => a.agent_id.startsWith("beat-")).sort((a, b) => Number(a.agent_id.slice(5)) - Number(b.agent_id.slice(5)));
    expect(beating.map((a) => [a.agent_id, a.role, a.expires_in_seconds > 60])).toEqual(Array.from({ length: AGENTS }, (_, a) => [`beat-${a}`, `role-${a}`, true]));
    // Batches of heartbeats went with their COMMIT.
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });
  test("first registrations commit in their flight, each recorded once with its role and TTL; a name another daemon registered meanwhile is not recorded again", async () => {
    const N = 8;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      const since = (await d2.call("watch_changes", { kinds: ["agent."] })).revision as number;
      const windows: { from: number; to: number }[] = [];
      const answers: Record<string, unknown>[] = [];
      for (let r = 0; r < 3; r++) {
        // A write just before: the connection has answered a COMMIT lately, so a batch all of
        // whose bodies end with their last may commit in its flight.
        await d2.call("increment_counter", { name: `warm-${r}` });
        const from = Date.now();
        answers.push(...(await Promise.all(Array.from({ length: N }, (_, i) => d2.call("register_agent", { agent_id: `first-${r}-${i}`, ttl_seconds: 90, ...(i % 2 ? { role: `role-${i}` } : {}) })))));
        windows.push({ from, to: Date.now() });
      }
      // Registered on d1 first, then on d2: a heartbeat there, not a second registration.
      await d1.call("register_agent", { agent_id: "first-elsewhere", ttl_seconds: 90 });
      answers.push(await d2.call("register_agent", { agent_id: "first-elsewhere", ttl_seconds: 90 }));
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["agent."], limit: 100 })).changes as { kind: string; resource: string; agent_id?: string; role?: string; ttl_seconds?: number }[];
      return { windows, answers, changes };
    });
    expect(value.answers.map((a) => a.registered)).toEqual(Array.from({ length: 3 * N + 1 }, () => true));
    expect(value.changes.map((e) => `${e.kind} ${e.resource} ${e.agent_id} ${e.role ?? "-"} ${e.ttl_seconds}`).sort()).toEqual(
      [...Array.from({ length: 3 }, (_, r) => Array.from({ length: N }, (_, i) => `agent.registered first-${r}-${i} first-${r}-${i} ${i % 2 ? `role-${i}` : "-"} 90`)).flat(), "agent.registered first-elsewhere first-elsewhere - 90"].sort(),
    );
    // In each round every batch of the traced daemon (the heartbeats that found no row, then
    // the inserts) committed in its flight: each batch's start ("order shared") is followed by
    // its COMMIT sent in the flight, before the next starts. (From the round's first batch on:
    // the warm-up's marks may share the window's first millisecond.)
    for (const w of value.windows) {
      const seen = labels(w.from, w.to);
      const marks = seen.slice(seen.indexOf("order shared")).flatMap((l) => (l === "order shared" ? ["begin"] : l.startsWith("commit in flight ") ? ["commit"] : []));
      expect(marks.length).toBeGreaterThanOrEqual(4);
      expect(marks).toEqual(Array.from({ length: marks.length / 2 }, () => ["begin", "commit"]).flat());
    }
  });
  test("notes with no expiry are set and swapped in their flight; each write is recorded with its length, a swap that failed is not, and a note that expires still is", async () => {
    const NOTES = 16;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      const since = (await d2.call("watch_changes", { kinds: ["note."] })).revision as number;
      const from = Date.now();
      for (let r = 1; r <= 3; r++) {
        const sets = Array.from({ length: NOTES }, (_, n) => d2.call("set_note", { key: `flight-note-${n}`, value: "x".repeat(r * 10 + n), author: `writer-${n}` }));
        for (const s of await Promise.all(sets)) expect(s).toMatchObject({ saved: true });
      }
      // Then two swaps of each note side by side: one from its value (it swaps), one from a
      // value it does not hold (it does not, and is not recorded).
      const swaps = Array.from({ length: NOTES }, (_, n) => [
        d2.call("set_note_if", { key: `flight-note-${n}`, expected_value: "x".repeat(30 + n), new_value: "y".repeat(n + 1), author: `swapper-${n}` }),
        d2.call("set_note_if", { key: `flight-note-${n}`, expected_value: "not it", new_value: "z", author: `loser-${n}` }),
      ]).flat();
      const swapped = (await Promise.all(swaps)).map((r) => r.swapped);
      expect(swapped).toEqual(Array.from({ length: NOTES }, () => [true, false]).flat());
      const to = Date.now();
      expect(await d2.call("set_note", { key: "flight-brief", value: "soon gone", ttl_seconds: 1 })).toMatchObject({ saved: true });
      const notes = await Promise.all(Array.from({ length: NOTES }, (_, n) => d1.call("get_note", { key: `flight-note-${n}` })));
      await Bun.sleep(1_500);
      const brief = await d1.call("get_note", { key: "flight-brief" });
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["note."], limit: 100 })).changes as { kind: string; resource: string; agent_id?: string; length?: number; expires_at?: number }[];
      return { from, to, notes, brief, changes };
    });
    expect(value.notes.map((n) => [n.value, n.author])).toEqual(Array.from({ length: NOTES }, (_, n) => ["y".repeat(n + 1), `swapper-${n}`]));
    expect(value.brief).toMatchObject({ found: false });
    const sets = value.changes.filter((e) => e.kind === "note.set" && e.resource.startsWith("flight-note-"));
    for (let n = 0; n < NOTES; n++) {
      const recorded = sets.filter((e) => e.resource === `flight-note-${n}`).map((e) => [e.length, e.agent_id, e.expires_at]);
      expect(recorded).toEqual([...[1, 2, 3].map((r) => [r * 10 + n, `writer-${n}`, undefined]), [n + 1, `swapper-${n}`, undefined]]);
    }
    expect(value.changes.filter((e) => e.resource === "flight-brief").map((e) => e.kind)).toEqual(["note.set", "note.expired"]);
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });
  test("notes that expire, deletions and task completions commit in their flight; each is recorded once with its length, expiry, queue or worker, and what was refused is recorded nowhere", async () => {
    const N = 12;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      // One completion first, alone: it arms the traced daemon's purge of finished tasks (the
      // lookup a completion makes when none is armed), so the others can go in their flight.
      for (let i = 0; i <= N; i++) await d1.call("push_task", { queue: `flight-done-${i % 3}`, payload: `p${i}` });
      const tasks = await Promise.all(Array.from({ length: N + 1 }, (_, i) => d1.call("claim_next_task", { queue: `flight-done-${i % 3}`, agent_id: `doer-${i}`, lease_seconds: 60 })));
      expect(await d2.call("complete_task", { id: tasks[N]!.id, lease_token: tasks[N]!.lease_token })).toEqual({ completed: true });
      const since = (await d2.call("watch_changes", { kinds: ["note.", "task."] })).revision as number;
      const from = Date.now();
      const at: number[] = [from];
      const sets = await Promise.all(Array.from({ length: N }, (_, n) => d2.call("set_note", { key: `flight-ttl-${n}`, value: "v".repeat(n + 1), author: `setter-${n}`, ttl_seconds: 60 })));
      at.push(Date.now());
      const swaps = await Promise.all(
        Array.from({ length: N }, (_, n) => [
          d2.call("set_note_if", { key: `flight-ttl-${n}`, expected_value: "v".repeat(n + 1), new_value: "w".repeat(n + 2), author: `swapper-${n}`, ttl_seconds: 90 }),
          d2.call("set_note_if", { key: `flight-ttl-${n}`, expected_value: "not it", new_value: "z", ttl_seconds: 90 }),
        ]).flat(),
      );
      at.push(Date.now());
      const deletes = await Promise.all(Array.from({ length: N }, (_, n) => [d2.call("delete_note", { key: `flight-ttl-${n}` }), d2.call("delete_note", { key: `flight-absent-${n}` })]).flat());
      at.push(Date.now());
      const completions = await Promise.all(
        tasks.slice(0, N).map((t, i) => (i % 4 === 3 ? d2.call("complete_task", { id: t.id, lease_token: "not-the-lease" }) : d2.call("complete_task", { id: t.id, lease_token: t.lease_token }))),
      );
      const to = Date.now();
      at.push(to);
      // A note of one second set last: the traced daemon's expiry timer (armed for the notes of
      // 60 and 90 seconds) moves to it, and it is recorded expired.
      expect(await d2.call("set_note", { key: "flight-soon", value: "x", ttl_seconds: 1 })).toMatchObject({ saved: true });
      await Bun.sleep(1_500);
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["note.", "task."], limit: 200 })).changes as { kind: string; resource: string; agent_id?: string; length?: number; expires_at?: number; id?: number }[];
      const listed = await Promise.all([0, 1, 2].map((q) => d1.call("list_tasks", { queue: `flight-done-${q}` })));
      const left = (listed.flat() as { id: number; state: string }[]).filter((t) => t.state === "claimed").map((t) => t.id);
      return { from, to, at, sets, swaps, deletes, completions, changes, left, tasks: tasks.map((t) => t.id as number) };
    });
    expect(value.sets.map((s) => s.saved)).toEqual(Array.from({ length: N }, () => true));
    expect(value.swaps.map((s) => s.swapped)).toEqual(Array.from({ length: N }, () => [true, false]).flat());
    expect(value.deletes.map((d) => d.deleted)).toEqual(Array.from({ length: N }, () => [true, false]).flat());
    expect(value.completions.map((c) => c.completed)).toEqual(Array.from({ length: N }, (_, i) => i % 4 !== 3));
    // Each note: set with its length and an expiry, swapped once, deleted once, in that order.
    for (let n = 0; n < N; n++) {
      const mine = value.changes.filter((e) => e.resource === `flight-ttl-${n}`);
      expect(mine.map((e) => [e.kind, e.agent_id ?? null, e.length ?? null, typeof e.expires_at])).toEqual([
        ["note.set", `setter-${n}`, n + 1, "number"],
        ["note.set", `swapper-${n}`, n + 2, "number"],
        ["note.deleted", null, null, "undefined"],
      ]);
      expect(mine[1]!.expires_at! - mine[0]!.expires_at!).toBeGreaterThanOrEqual(29_000);
    }
    expect(value.changes.filter((e) => e.resource.startsWith("flight-absent-"))).toEqual([]);
    expect(value.changes.filter((e) => e.resource === "flight-soon").map((e) => e.kind)).toEqual(["note.set", "note.expired"]);
    // Each completion recorded once, in its queue, by its worker; the refused ones not, and their tasks still claimed.
    const done = value.changes.filter((e) => e.kind === "task.completed");
    expect(done.map((e) => `${e.resource} ${e.agent_id} ${e.id}`).sort()).toEqual(
      value.tasks.slice(0, N).flatMap((id, i) => (i % 4 === 3 ? [] : [`flight-done-${i % 3} doer-${i} ${id}`])).sort(),
    );
    expect(value.left.sort((a, b) => a - b)).toEqual(value.tasks.filter((_, i) => i < N && i % 4 === 3));
    // Each of the four kinds of calls (sets, swaps, deletions, completions) committed batches of several in their flight.
    const several = (from: number, to: number) => labels(from, to).some((l) => l.startsWith("commit in flight ") && Number(l.slice("commit in flight ".length)) > 1);
    expect(value.at.slice(1).map((to, k) => several(value.at[k]!, to))).toEqual([true, true, true, true]);
  });
  test("locks taken and released with nobody in line commit in their flight; each is recorded with its holder and fence; names a waiting group reserves, taken before or never, are not taken", async () => {
    const N = 12;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      const since = (await d2.call("watch_changes", { kinds: ["lock."] })).revision as number;
      // A group waits on d1 for a held name and one taken and released before: it reserves the
      // second. d2 is not told (d1 wrote only places of its own), so only the stored line stands
      // between d2's row bodies and that name.
      expect((await d1.call("lock_resource", { name: "flight-held", agent_id: "keeper", ttl_seconds: 60 })).locked).toBe(true);
      const before = await d1.call("lock_resource", { name: "flight-before", agent_id: "keeper", ttl_seconds: 60 });
      expect(await d1.call("unlock_resource", { name: "flight-before", lock_token: before.lock_token })).toMatchObject({ released: true });
      const waiters = async (n: number) => ((await d1.call("list_locks")) as { name: string; waiters?: unknown[] }[]).some((l) => l.name === "flight-held" && (l.waiters?.length ?? 0) === n);
      const group1 = d1.call("lock_resources", { names: ["flight-held", "flight-before"], agent_id: "grouper-1", ttl_seconds: 60, wait_seconds: 20 });
      await until("the first group in line", () => waiters(1), 5_000);
      const at: number[] = [Date.now()];
      const rounds: { locked: unknown[]; released: unknown[] }[] = [];
      for (let r = 0; r < 3; r++) {
        const got = await Promise.all(Array.from({ length: N }, (_, i) => d2.call("lock_resource", { name: `flight-free-${i}`, agent_id: `taker-${i}`, ttl_seconds: 60 })));
        at.push(Date.now());
        const released = await Promise.all(got.map((g, i) => d2.call("unlock_resource", { name: `flight-free-${i}`, ...(i % 2 === 0 ? { lock_token: g.lock_token } : { agent_id: `taker-${i}` }) })));
        at.push(Date.now());
        rounds.push({ locked: got.map((g) => [g.locked, g.fence]), released: released.map((x) => x.released) });
      }
      // The reserved name: refused on the traced daemon, though nobody holds it. That refusal's
      // line body caught d2 up; a second group, joining after it, reserves a name never taken
      // (no row), refused the same way.
      const reserved = [await d2.call("lock_resource", { name: "flight-before", agent_id: "intruder", ttl_seconds: 60 })];
      expect(reserved[0].locked).toBe(false); // here already: taken, it would leave the first group waiting
      const group2 = d1.call("lock_resources", { names: ["flight-held", "flight-never"], agent_id: "grouper-2", ttl_seconds: 60, wait_seconds: 20 });
      await until("the second group in line", () => waiters(2), 5_000);
      reserved.push(await d2.call("lock_resource", { name: "flight-never", agent_id: "intruder", ttl_seconds: 60 }));
      expect(reserved[1].locked).toBe(false);
      // Then each group in turn.
      expect(await d1.call("unlock_resource", { name: "flight-held", agent_id: "keeper" })).toMatchObject({ released: true });
      const first = await group1;
      for (const [name, token] of Object.entries(first.tokens as Record<string, string>)) expect(await d1.call("unlock_resource", { name, lock_token: token })).toMatchObject({ released: true });
      const grouped = [first, await group2];
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["lock."], limit: 300 })).changes as { kind: string; resource: string; agent_id?: string; fence?: number }[];
      return { at, rounds, reserved, grouped, changes };
    });
    for (const [r, round] of value.rounds.entries()) {
      expect(round.locked).toEqual(Array.from({ length: N }, () => [true, r + 1]));
      expect(round.released).toEqual(Array.from({ length: N }, () => true));
    }
    expect(value.reserved.map((r) => r.locked)).toEqual([false, false]);
    expect(value.grouped.map((g) => g.locked)).toEqual([true, true]);
    // Each name: taken and released three times, each entry naming its holder, each take its fence.
    for (let i = 0; i < N; i++) {
      const mine = value.changes.filter((e) => e.resource === `flight-free-${i}`).map((e) => `${e.kind} ${e.agent_id} ${e.fence ?? "-"}`);
      expect(mine).toEqual([1, 2, 3].flatMap((f) => [`lock.granted taker-${i} ${f}`, `lock.released taker-${i} -`]));
    }
    expect(value.changes.filter((e) => e.agent_id === "intruder")).toEqual([]);
    // Each round's takes and its releases committed in batches of several in their flight.
    const several = (from: number, to: number) => labels(from, to).some((l) => l.startsWith("commit in flight ") && Number(l.slice("commit in flight ".length)) > 1);
    expect(value.at.slice(1).map((to, k) => several(value.at[k]!, to))).toEqual(Array.from({ length: 6 }, () => true));
  });
  test("event signals and task pushes with nobody in line commit in their flight, each recorded once with its generation or id; with someone waiting on the other daemon, the signal wakes them and the push hands the task over", async () => {
    const N = 12;
    const { value, labels } = await withTracedPair(async (d1, d2, db) => {
      const since = (await d2.call("watch_changes", { kinds: ["event.", "task."] })).revision as number;
      const at: number[] = [Date.now()];
      const signals: unknown[][] = [];
      for (let r = 0; r < 3; r++) signals.push((await Promise.all(Array.from({ length: N }, (_, i) => d2.call("signal_event", { name: `flight-ev-${i}` })))).map((a) => a.generation));
      at.push(Date.now());
      const pushed = await Promise.all(Array.from({ length: N }, (_, i) => d2.call("push_task", { queue: `flight-push-${i % 3}`, payload: `job-${i}`, author: `pusher-${i}`, priority: i % 4 })));
      at.push(Date.now());
      // A claimer, then a waiter, blocked on d1, which writes only places of its own: d2 is not
      // told, so only the stored lines stand between its row bodies and them. (The push's line
      // body catches d2 up: so the waiter joins after it. Unwoken, each would still see its task
      // or signal at the end of its wait: so the test also asks that they were answered long
      // before it.)
      const stored = async () => (await storeQuery<{ queue: string }>(db, "SELECT queue FROM waiters WHERE queue IN ('event', 'task') ORDER BY queue")).map((r) => r.queue);
      const claiming = d1.call("claim_next_task", { queue: "flight-push-awaited", agent_id: "claimer", wait_seconds: WAIT_S });
      await until("the claimer in the stored lines", async () => (await stored()).join() === "task", 5_000);
      let sent = Date.now();
      const handed = await d2.call("push_task", { queue: "flight-push-awaited", payload: "for-the-claimer" });
      const claimed = await claiming;
      const answeredAfter = [Date.now() - sent];
      const waiting = d1.call("wait_for_event", { name: "flight-ev-awaited", wait_seconds: WAIT_S });
      await until("the waiter in the stored lines", async () => (await stored()).join() === "event", 5_000);
      sent = Date.now();
      const fired = await d2.call("signal_event", { name: "flight-ev-awaited" });
      const woke = await waiting;
      answeredAfter.push(Date.now() - sent);
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["event.", "task."], limit: 300 })).changes as { kind: string; resource: string; agent_id?: string; generation?: number; id?: number; priority?: number }[];
      return { at, signals, pushed: pushed.map((p) => p.id as number), fired, handed, woke, claimed, answeredAfter, changes };
    });
    expect(value.signals).toEqual([1, 2, 3].map((g) => Array.from({ length: N }, () => g)));
    for (let i = 0; i < N; i++) {
      expect(value.changes.filter((e) => e.resource === `flight-ev-${i}`).map((e) => `${e.kind} ${e.generation}`)).toEqual([1, 2, 3].map((g) => `event.signaled ${g}`));
    }
    const pushes = value.changes.filter((e) => e.kind === "task.pushed" && e.resource.startsWith("flight-push-") && e.resource !== "flight-push-awaited");
    expect(pushes.map((e) => `${e.resource} ${e.agent_id} ${e.id} ${e.priority}`).sort()).toEqual(value.pushed.map((id, i) => `flight-push-${i % 3} pusher-${i} ${id} ${i % 4}`).sort());
    // The waiter woke to the signal, the claimer got the task pushed.
    expect(value.woke).toMatchObject({ fired: true, generation: value.fired.generation });
    expect(value.claimed).toMatchObject({ claimed: true, id: value.handed.id, payload: "for-the-claimer" });
    expect(value.answeredAfter.map((ms) => ms < (WAIT_S * 1000) / 2)).toEqual([true, true]); // woken, not answered at the end of their wait
    const several = (from: number, to: number) => labels(from, to).some((l) => l.startsWith("commit in flight ") && Number(l.slice("commit in flight ".length)) > 1);
    expect(value.at.slice(1).map((to, k) => several(value.at[k]!, to))).toEqual([true, true]);
  });
  test("working-tree reports that change nothing commit in their flight and are not recorded; one the daemon remembers behind the row goes to its line body and is recorded", async () => {
    const N = 12;
    const room = "flight-wt";
    const report = (d: DaemonProcess, i: number, dirty = [`src/a-${i}.ts`]) => d.call("report_worktree", { agent_id: `wt-${i}`, room, branch: "main", dirty, touched: [`src/a-${i}.ts`] });
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      const since = (await d1.call("watch_changes", { kinds: ["worktree."] })).revision as number;
      for (let i = 0; i < N; i++) await report(d2, i); // each a change: the line body's
      const from = Date.now();
      const rounds: unknown[][] = [];
      for (let r = 0; r < 3; r++) rounds.push((await Promise.all(Array.from({ length: N }, (_, i) => report(d2, i)))).map((t) => [t.dirty_count, t.touched]));
      const to = Date.now();
      // wt-0's report changed through d1 (d2 is not told: it remembers the first), then the
      // first report again through d2: memory says "the same", the row does not.
      await report(d1, 0, ["src/a-0.ts", "src/b-0.ts"]);
      const back = await report(d2, 0);
      const listed = (await d1.call("list_worktrees", { room })) as { agent_id: string; dirty_count: number }[];
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["worktree."], limit: 200 })).changes as { kind: string; agent_id?: string; dirty_count?: number }[];
      return { from, to, rounds, back, listed, changes };
    });
    expect(value.rounds).toEqual([0, 1, 2].map(() => Array.from({ length: N }, (_, i) => [1, [`src/a-${i}.ts`]])));
    expect(value.back.dirty_count).toBe(1);
    expect(value.listed.find((w) => w.agent_id === "wt-0")?.dirty_count).toBe(1);
    // Recorded: each first report, wt-0's change and its change back; none of the reports that changed nothing.
    const recorded = value.changes.map((e) => `${e.agent_id} ${e.dirty_count}`);
    expect(recorded.sort()).toEqual([...Array.from({ length: N }, (_, i) => `wt-${i} 1`), "wt-0 2", "wt-0 1"].sort());
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });
  test("task claims commit in their flight, each recorded once with its attempt from the row; claimers racing on two daemons take each task once; a claim on an empty queue answers without an exclusive turn", async () => {
    const N = 12;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      for (let i = 0; i < N; i++) await d1.call("push_task", { queue: `flight-claim-${i % 3}`, payload: `p${i}`, priority: i % 2 });
      const since = (await d2.call("watch_changes", { kinds: ["task."] })).revision as number;
      const at: number[] = [Date.now()];
      const claims = await Promise.all(Array.from({ length: N }, (_, i) => d2.call("claim_next_task", { queue: `flight-claim-${i % 3}`, agent_id: `claimer-${i}`, lease_seconds: 60 })));
      at.push(Date.now());
      // One given back, claimed again: its second attempt, which only the row knows.
      expect(await d1.call("fail_task", { id: claims[0]!.id, lease_token: claims[0]!.lease_token, requeue: true })).toEqual({ failed: true });
      const again = await d2.call("claim_next_task", { queue: "flight-claim-0", agent_id: "again", lease_seconds: 60 });
      // Eight tasks, eight claimers on two daemons at once: a claim that loses a race for the task
      // it picked while others are pending still gets one; each task is taken once.
      for (let i = 0; i < 8; i++) await d1.call("push_task", { queue: "flight-race", payload: `r${i}` });
      const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? d1 : d2).call("claim_next_task", { queue: "flight-race", agent_id: `racer-${i}` })));
      // Claims on queues with nothing pending (one never used, one emptied above): answered at
      // once, in the shared order.
      const emptyFrom = Date.now();
      const empty = await Promise.all(Array.from({ length: 6 }, (_, i) => d2.call("claim_next_task", { queue: i % 2 ? "flight-never" : "flight-race", agent_id: `poller-${i}` })));
      const emptyTo = Date.now();
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["task.claimed"], limit: 200 })).changes as { resource: string; agent_id?: string; id?: number; attempt?: number; expires_at?: number }[];
      return { at, claims, again, raced, empty, emptyFrom, emptyTo, changes };
    });
    expect(value.claims.map((c) => c.claimed)).toEqual(Array.from({ length: N }, () => true));
    // Each queue's tasks by priority, then age; each claimed once.
    expect(new Set(value.claims.map((c) => c.id)).size).toBe(N);
    expect(value.again).toMatchObject({ claimed: true, id: value.claims[0]!.id });
    const mine = value.changes.filter((e) => e.resource.startsWith("flight-claim-"));
    expect(mine.map((e) => `${e.resource} ${e.agent_id} ${e.id} ${e.attempt}`).sort()).toEqual(
      [...value.claims.map((c, i) => `flight-claim-${i % 3} claimer-${i} ${c.id} 1`), `flight-claim-0 again ${value.claims[0]!.id} 2`].sort(),
    );
    // The entry's lease end is the one the lease got: 60 s after the call, give or take the call.
    for (const e of mine) expect(e.expires_at! - value.at[0]!).toBeGreaterThan(59_000);
    for (const e of mine) expect(e.expires_at! - Date.now()).toBeLessThanOrEqual(60_000);
    expect(value.raced.map((c) => c.claimed)).toEqual(Array.from({ length: 8 }, () => true));
    expect(new Set(value.raced.map((c) => c.id)).size).toBe(8);
    expect(value.changes.filter((e) => e.resource === "flight-race").map((e) => e.id).sort()).toEqual(value.raced.map((c) => c.id).sort());
    expect(value.empty).toEqual(Array.from({ length: 6 }, () => ({ claimed: false })));
    expect(labels(value.emptyFrom, value.emptyTo).filter((l) => l === "order exclusive")).toEqual([]);
    expect(labels(value.at[0]!, value.at[1]!).some((l) => l.startsWith("commit in flight ") && Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });
  test("the hooks' deliveries to empty inboxes commit in their flight, and stops with nothing to hold for take no exclusive turn; messages sent meanwhile on the other daemon are each delivered once, to their agent alone, and a stop is held for the one asking for an ack", async () => {
    const N = 8;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      for (let i = 0; i < N; i++) await d1.call("register_agent", { agent_id: `hooked-${i}`, ttl_seconds: 3600 });
      const deliver = (i: number, point = i % 2 ? "tool" : "prompt") => d2.rpc("airlock/deliver", { agent_id: `hooked-${i}`, point });
      const from = Date.now();
      const empty = [];
      for (let r = 0; r < 3; r++) empty.push(...(await Promise.all(Array.from({ length: N }, (_, i) => deliver(i)))));
      const to = Date.now();
      const stops = await Promise.all(Array.from({ length: N }, (_, i) => deliver(i, "stop")));
      const stopped = Date.now();
      // Messages to the even agents, two to the first; each shown once, the odd ones shown nothing.
      const sent = await Promise.all([0, 0, 2, 4, 6].map((i, k) => d1.call("send_message", { from: "writer", to: [`hooked-${i}`], body: `m${k}`, ...(k === 2 ? { ack_required: true } : {}) })));
      const first = await Promise.all(Array.from({ length: N }, (_, i) => deliver(i)));
      const second = await Promise.all(Array.from({ length: N }, (_, i) => deliver(i)));
      const held = await Promise.all([2, 4].map((i) => deliver(i, "stop")));
      return { from, to, stopped, empty, stops, sent: sent.map((m) => m.message_id as number), first, second, held };
    });
    type Answer = { result: { messages: { id: number; body: string }[]; hold_for: { id: number }[]; more: number } };
    const shown = (r: Answer) => r.result.messages.map((m) => `${m.id} ${m.body}`);
    expect(value.empty.map((r) => [shown(r), r.result.more])).toEqual(Array.from({ length: 3 * N }, () => [[], 0]));
    expect(value.stops.map((r) => r.result)).toEqual(Array.from({ length: N }, () => ({ messages: [], hold_for: [], more: 0 })));
    const ids = value.sent;
    expect(value.first.map(shown)).toEqual([[`${ids[0]} m0`, `${ids[1]} m1`], [], [`${ids[2]} m2`], [], [`${ids[3]} m3`], [], [`${ids[4]} m4`], []]);
    expect(value.second.map(shown)).toEqual(Array.from({ length: N }, () => []));
    expect(value.held.map((r: Answer) => r.result.hold_for.map((m) => m.id))).toEqual([[ids[2]!], []]);
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
    expect(labels(value.to, value.stopped).filter((l) => l === "order exclusive")).toEqual([]);
  });
  test("lock and task lease renewals commit in their flight; each is recorded with its holder, its fence or task, and its queue; a renewal not held is refused and recorded nowhere", async () => {
    const N = 8;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      const locks = await Promise.all(Array.from({ length: N }, (_, i) => d1.call("lock_resource", { name: `flight-lock-${i}`, agent_id: `holder-${i}`, ttl_seconds: 60 })));
      for (let i = 0; i < N; i++) await d1.call("push_task", { queue: `flight-q-${i % 2}`, payload: `p${i}` });
      const tasks = await Promise.all(Array.from({ length: N }, (_, i) => d1.call("claim_next_task", { queue: `flight-q-${i % 2}`, agent_id: `worker-${i}`, lease_seconds: 60 })));
      const since = (await d2.call("watch_changes", { kinds: ["lock.", "task."] })).revision as number;
      const from = Date.now();
      const answers: Record<string, unknown>[] = [];
      for (let r = 0; r < 3; r++) {
        const calls = [
          // By token on even locks, by agent on odd ones; the tasks by their lease.
          ...locks.map((l, i) => d2.call("renew_lock", { name: `flight-lock-${i}`, ttl_seconds: 90 + r, ...(i % 2 === 0 ? { lock_token: l.lock_token } : { agent_id: `holder-${i}` }) })),
          ...tasks.map((t) => d2.call("renew_task", { id: t.id, lease_token: t.lease_token, lease_seconds: 90 + r })),
          d2.call("renew_lock", { name: "flight-lock-0", agent_id: "not-the-holder", ttl_seconds: 90 }),
        ];
        answers.push(...(await Promise.all(calls)));
      }
      const to = Date.now();
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["lock.", "task."], limit: 200 })).changes as { kind: string; resource: string; agent_id?: string; fence?: number; id?: number }[];
      return { from, to, answers, changes, locks: locks.map((l) => l.fence as number), tasks: tasks.map((t) => ({ id: t.id as number, payload: t.payload as string })) };
    });
    const per = 2 * N + 1;
    for (let r = 0; r < 3; r++) {
      const round = value.answers.slice(r * per, (r + 1) * per);
      // Each renewed to its new lease, within a few seconds however long the call took.
      const within = (s: unknown) => typeof s === "number" && s > 85 + r && s <= 90 + r;
      expect(round.slice(0, N).map((a) => [a.renewed, within(a.expires_in_seconds)])).toEqual(Array.from({ length: N }, () => [true, true]));
      expect(round.slice(N, 2 * N).map((a) => [a.renewed, within(a.lease_expires_in_seconds)])).toEqual(Array.from({ length: N }, () => [true, true]));
      expect(round[2 * N]).toMatchObject({ renewed: false });
    }
    const renewed = (kind: string) => value.changes.filter((e) => e.kind === kind);
    // Three renewals of each lock, by its holder, with its fence; none for the refused one.
    expect(renewed("lock.renewed").map((e) => `${e.resource} ${e.agent_id} ${e.fence}`).sort()).toEqual(
      Array.from({ length: N }, (_, i) => Array.from({ length: 3 }, () => `flight-lock-${i} holder-${i} ${value.locks[i]}`)).flat().sort(),
    );
    // Three of each task, in its queue, by its worker.
    expect(renewed("task.renewed").map((e) => `${e.resource} ${e.agent_id} ${e.id}`).sort()).toEqual(
      value.tasks.flatMap(({ id, payload }, i) => Array.from({ length: 3 }, () => `flight-q-${Number(payload.slice(1)) % 2} worker-${i} ${id}`)).sort(),
    );
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });

  test("acks with no reply commit in their flight; each is recorded once on its message's thread by its reader, and an ack of a message not in the inbox is refused and recorded nowhere", async () => {
    const N = 8;
    const { value, labels } = await withTracedPair(async (d1, d2) => {
      for (let i = 0; i < N; i++) await d1.call("register_agent", { agent_id: `acker-${i}`, ttl_seconds: 300 });
      // Odd messages continue a thread of their own: the entry's resource is the thread, not the id.
      const sent = await Promise.all(Array.from({ length: N }, (_, i) => d1.call("send_message", { from: "writer", to: [`acker-${i}`], body: `m${i}`, ...(i % 2 === 1 ? { thread_id: `t-${i}` } : {}) })));
      const since = (await d2.call("watch_changes", { kinds: ["message."] })).revision as number;
      const from = Date.now();
      const answers: Record<string, unknown>[] = [];
      for (let r = 0; r < 2; r++) {
        const calls = [
          ...sent.map((m, i) => d2.call("ack_message", { agent_id: `acker-${i}`, message_id: m.message_id })),
          d2.call("ack_message", { agent_id: "acker-0", message_id: sent[1].message_id }), // acker-1's
        ];
        answers.push(...(await Promise.all(calls)));
      }
      const to = Date.now();
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["message."], limit: 100 })).changes as { kind: string; resource: string; agent_id?: string; id?: number }[];
      const unread = await Promise.all(Array.from({ length: N }, (_, i) => d1.call("read_messages", { agent_id: `acker-${i}`, peek: true }).then((r) => r.unread as number)));
      return { from, to, answers, changes, unread, sent: sent.map((m) => ({ id: m.message_id as number, thread: m.thread_id as string })) };
    });
    for (let r = 0; r < 2; r++) {
      const round = value.answers.slice(r * (N + 1), (r + 1) * (N + 1));
      expect(round.slice(0, N)).toEqual(Array.from({ length: N }, () => ({ acked: true })));
      expect(round[N]).toMatchObject({ isError: true });
      expect(String(round[N]!.error)).toContain("is no message");
    }
    expect(value.unread).toEqual(Array.from({ length: N }, () => 0)); // an ack marks it read
    const acked = value.changes.filter((e) => e.kind === "message.acked").map((e) => `${e.resource} ${e.agent_id} ${e.id}`);
    expect(value.sent.map((m, i) => m.thread === (i % 2 === 1 ? `t-${i}` : String(m.id)))).toEqual(Array.from({ length: N }, () => true));
    expect(acked.sort()).toEqual(value.sent.flatMap((m, i) => [0, 1].map(() => `thread:${m.thread} acker-${i} ${m.id}`)).sort());
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });

  test("sends to registered agents commit in their flight, each recorded once on its thread with its recipients; a reader waiting on the other daemon is woken, and a name nobody knows is refused", async () => {
    const N = 8;
    const { value, labels } = await withTracedPair(async (d1, d2, db) => {
      for (let i = 0; i <= N + 1; i++) await d1.call("register_agent", { agent_id: `inbox-${i}`, ttl_seconds: 300 });
      const since = (await d2.call("watch_changes", { kinds: ["message."] })).revision as number;
      const from = Date.now();
      // Odd ones in threads of their own, one to two agents, one asking for an ack.
      const send = (i: number) => d2.call("send_message", { from: "writer", to: i === 0 ? ["inbox-0", "inbox-1"] : [`inbox-${i}`], body: `b${i}`, ...(i % 2 === 1 ? { thread_id: `th-${i}` } : {}), ...(i === 2 ? { ack_required: true } : {}) });
      const sent = await Promise.all(Array.from({ length: N }, (_, i) => send(i)));
      const to = Date.now();
      const refused = await d2.call("send_message", { from: "writer", to: ["nobody-knows-me"], body: "x" });
      // A read blocked on d1, which writes its place for d2 only in the stored lines.
      const reading = d1.call("read_messages", { agent_id: `inbox-${N + 1}`, wait_seconds: WAIT_S });
      await until("the reader in the stored lines", async () => (await storeQuery(db, "SELECT 1 FROM waiters WHERE queue = 'message'")).length === 1, 5_000);
      const at = Date.now();
      const woke = await d2.call("send_message", { from: "writer", to: [`inbox-${N + 1}`], body: "wake up" });
      const read = await reading;
      const readAfter = Date.now() - at;
      const changes = (await d1.call("watch_changes", { since_revision: since, kinds: ["message."], limit: 100 })).changes as { kind: string; resource: string; agent_id?: string; id?: number; to?: string[]; ack_required?: boolean }[];
      const inboxes = await Promise.all(Array.from({ length: N }, (_, i) => d1.call("read_messages", { agent_id: `inbox-${i}` }).then((r) => (r.messages as { id: number; body: string }[]).map((m) => `${m.id} ${m.body}`))));
      return { from, to, sent, refused, woke, read, readAfter, changes, inboxes };
    });
    const ids = value.sent.map((m) => m.message_id as number);
    expect(value.sent.map((m, i) => m.thread_id === (i % 2 === 1 ? `th-${i}` : String(m.message_id)))).toEqual(Array.from({ length: N }, () => true));
    expect(value.sent[0]!.to).toEqual(["inbox-0", "inbox-1"]);
    // Each inbox holds what was sent to it, once (inbox-1 its own and the one to two agents).
    expect(value.inboxes).toEqual(Array.from({ length: N }, (_, i) => (i === 1 ? [`${ids[0]} b0`, `${ids[1]} b1`] : [`${ids[i]} b${i}`])));
    const sentEntries = value.changes.filter((e) => e.kind === "message.sent" && e.id !== value.woke.message_id);
    expect(sentEntries.map((e) => `${e.resource} ${e.agent_id} ${e.id} ${JSON.stringify(e.to)} ${e.ack_required ?? false}`).sort()).toEqual(
      value.sent.map((m, i) => `thread:${m.thread_id} writer ${m.message_id} ${JSON.stringify(m.to)} ${i === 2}`).sort(),
    );
    expect(value.refused).toMatchObject({ isError: true });
    expect(String(value.refused.error)).toContain("unknown agent");
    // Woken by the send, not answered at the end of its wait.
    expect(value.read.messages.map((m: { id: number; body: string }) => `${m.id} ${m.body}`)).toEqual([`${value.woke.message_id} wake up`]);
    expect(value.readAfter).toBeLessThan((WAIT_S * 1000) / 2);
    const flights = labels(value.from, value.to).filter((l) => l.startsWith("commit in flight "));
    expect(flights.some((l) => Number(l.slice("commit in flight ".length)) > 1)).toBe(true);
  });
});
