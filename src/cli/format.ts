// Human rendering of journal changes (shared by `log` and status' recent changes), of a status snapshot (path claims grouped by room), shared by `status` and
// `watch`, and of pools, shared by `status`, `pools` and the place-in-line line that `run` and
// `wait` print while they queue.
import { colors } from "consola/utils";
import { env } from "../config/env.ts";
import { type CycleStep, wouldDeadlockLabel } from "../domain/deadlock.ts";
import type { ChangeView, Snapshot, SnapshotPool, SnapshotRoomClaims, WaitGraphView } from "../domain/snapshot.ts";

const c = (fn: (s: string) => string) => (s: string) => (env.noColor ? s : fn(s));
const bold = c(colors.bold);
const dim = c(colors.dim);
const yellow = c(colors.yellow);
const red = c(colors.red);

function section(title: string, rows: string[], count = rows.length): string {
  return [bold(`${title} (${count})`), ...(rows.length ? rows.map((r) => `  ${r}`) : [dim("  (none)")]), ""].join("\n");
}

export function renderStatus(s: Snapshot, where: string): string {
  const shared = s.daemons === undefined ? "" : dim(`  (a shared store: ${s.daemons} daemon${s.daemons === 1 ? "" : "s"} live)`);
  const head = `${bold("Airlock")} — ${where}${shared}${s.source === "database" ? yellow("  (daemon not running: read from the database)") : ""}\n`;
  const locks = s.locks.map((l) => {
    const q = l.queue_depth ? yellow(`  ${l.queue_depth} waiting: ${l.waiters.map((w) => `${w.agent_id}${w.task ? dim(" (task)") : ""}${w.blocked ? "" : dim(" (away)")}`).join(", ")}`) : "";
    return `${l.name}  ${dim("held by")} ${l.agent_id}  ${dim(`${duration(l.held_seconds)} held, expires in ${duration(l.expires_in_seconds)}, fence ${l.fence}`)}${q}`;
  });
  const agents = s.agents.map((a) => {
    const holds = [
      ...a.locks.map((n) => `lock ${n}`),
      ...a.tasks.map((t) => `task #${t}`),
      ...(a.slots ?? []).map((x) => `slot ${x.pool}×${x.weight}`),
      ...(a.claims ?? []).map((x) => `paths ${x.paths.join(" ")}`),
    ];
    const waits = (a.waiting_for ?? []).map((w) => `${w.kind} ${w.resource}${w.blocked_by.length ? ` (${w.blocked_by.join(", ")})` : ""}${w.blocked ? "" : dim(" away")}`);
    return `${a.agent_id}${a.role ? ` [${a.role}]` : ""}  ${dim(`heartbeat expires in ${duration(a.expires_in_seconds)}`)}${holds.length ? `  holds ${holds.join(", ")}` : ""}${waits.length ? yellow(`  waits for ${waits.join(", ")}`) : ""}`;
  });
  // An older daemon's snapshot has no graph or journal.
  const graph = s.graph ?? { edges: [], deadlocks: [], would_deadlock: [] };
  const edges = graph.edges.map((e) => `${e.agent_id} → ${e.waits_for}  ${dim(`${e.kind} ${e.resource}${e.blocked ? "" : ", between calls"}`)}`);
  const cycles = renderCycles(graph);
  const changes = (s.journal ?? []).slice(-RECENT_CHANGES).map((e) => formatChange(e));
  const queues = s.queues.map(
    (q) => `${q.queue}  ${q.pending} pending, ${q.claimed} claimed, ${q.done} done, ${q.failed} failed${q.waiters ? yellow(`, ${q.waiters} waiting`) : ""}`,
  );
  const events = s.events.map((e) => `${e.name}  generation ${e.generation}${e.waiters ? yellow(`, ${e.waiters} waiting`) : ""}`);
  const counters = s.counters.map((x) => `${x.name} = ${x.value}`);
  // An older daemon's snapshot has no claims.
  const claims = (s.claims ?? []).map((r) => [`${dim("room")} ${r.room}`, ...r.claims.map(renderClaim)].join("\n    "));
  return [
    head,
    section("LOCKS", locks),
    section("CLAIMS", claims, (s.claims ?? []).reduce((n, r) => n + r.claims.length, 0)),
    section("POOLS", s.pools.map((p) => renderPool(p).join("\n    "))),
    section("AGENTS", agents),
    section("INBOXES", (s.inboxes ?? []).map((i) => `${i.agent_id}  ${i.unread ? yellow(`${i.unread} unread`) : dim("0 unread")}${i.reading ? dim(`, ${i.reading} reading`) : ""}`)),
    section("WORKTREES", (s.worktrees ?? []).map(renderWorktree)),
    section("WAITS", [...cycles, ...edges], graph.edges.length),
    section("QUEUES", queues),
    section("EVENTS", events),
    section("COUNTERS", counters),
    `${bold("NOTES")} ${s.notes}\n`,
    section(`RECENT CHANGES to revision ${s.revision ?? 0}`, changes),
  ].join("\n");
}

/** One agent's reported checkout: where, on what, how much is uncommitted, and its own edits. */
function renderWorktree(w: NonNullable<Snapshot["worktrees"]>[number]): string {
  const on = [w.branch ? `on ${w.branch}` : "detached", w.head ? w.head.slice(0, 12) : ""].filter(Boolean).join(" ");
  const edits = w.touched.length ? `  edited ${w.touched.slice(0, 5).join(" ")}${w.touched.length > 5 ? ` and ${w.touched.length - 5} more` : ""}` : "";
  return `${w.agent_id}  ${dim(`room ${w.room}`)}  ${on}  ${w.dirty_count} uncommitted${edits}  ${dim(`reported ${duration(w.reported_seconds)} ago`)}`;
}

/** A journal change as watch_changes and the snapshot give it. */
export type Change = ChangeView;

const SHOWN = new Set(["revision", "at", "kind", "resource", "agent_id", "reason"]);

/**
 * One field of a change, for a human: times the daemon keeps as epoch milliseconds (`*_at`)
 * become clock times, lengths (`*_ms`, `*_seconds`) become durations, with the unit dropped
 * from the name: expires=10:57:03, held=25ms, ttl=15m.
 */
function field(k: string, v: unknown): string {
  if (typeof v === "number") {
    if (k.endsWith("_at")) return `${k.slice(0, -3)}=${clock(v)}`;
    if (k.endsWith("_ms")) return `${k.slice(0, -3)}=${durationMs(v)}`;
    if (k.endsWith("_seconds")) return `${k.slice(0, -8)}=${duration(v)}`;
  }
  return `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`;
}

/** One human line: revision, local time, kind, resource, agent, the kind's fields, and why. */
export function formatChange(c: Change): string {
  const fields = Object.entries(c)
    .filter(([k]) => !SHOWN.has(k))
    .map(([k, v]) => field(k, v));
  const parts = [`#${c.revision}`, clock(c.at), c.kind.padEnd(16), c.resource];
  if (c.agent_id !== undefined) parts.push(`by ${c.agent_id}`);
  if (fields.length > 0) parts.push(fields.join(" "));
  if (c.reason !== undefined) parts.push(`(${c.reason})`);
  return parts.join("  ");
}

/**
 * The graph's cycles, in the daemon's one meaning: a deadlock is a cycle whose agents are all
 * blocked right now (what a caller closing it is answered with); a cycle through agents between
 * calls is one that would deadlock if they blocked, and says who. The dashboard says the same.
 */
export function renderCycles(graph: WaitGraphView): string[] {
  // A daemon older than the two kinds sends one list of cycles, blocked or not: said as such.
  const old = (graph as { cycles?: CycleStep[][] }).cycles;
  if (graph.deadlocks === undefined) return (old ?? []).map((c) => yellow(`cycle: ${cycleSteps(c)}`) + dim("  (an older daemon: blocked or between calls unknown)"));
  return [
    ...graph.deadlocks.map((d) => red(`deadlock: ${cycleSteps(d.cycle)}`)),
    ...(graph.would_deadlock ?? []).map((c) => yellow(`${wouldDeadlockLabel(c.between_calls)}: ${cycleSteps(c.cycle)}`)),
  ];
}

const cycleSteps = (c: CycleStep[]) => `${c.map((x) => `${x.agent_id} → (${x.resource})`).join(" → ")} → ${c[0]?.agent_id ?? ""}`;

/** How many of the snapshot's journal entries status shows (airlock log shows them all). */
const RECENT_CHANGES = 10;

/** One path claim under its room: who, which paths, why, and for how long. */
function renderClaim(c: SnapshotRoomClaims["claims"][number]): string {
  return `${c.agent_id}  ${c.paths.join(" ")}${c.reason ? `  (${c.reason})` : ""}  ${dim(`expires in ${duration(c.expires_in_seconds)}, fence ${c.fence}`)}`;
}

/**
 * The one way the CLI writes a length of time: 45s, 2m 5s, 1h 5m, 3d 4h (two units at most:
 * short enough for a one-line progress report). Never raw seconds or milliseconds.
 */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = (big: number, bigUnit: string, small: number, smallUnit: string) => (small ? `${big}${bigUnit} ${small}${smallUnit}` : `${big}${bigUnit}`);
  if (s < 60) return `${s}s`;
  if (s < 3600) return two(Math.floor(s / 60), "m", s % 60, "s");
  if (s < 86_400) return two(Math.floor(s / 3600), "h", Math.floor((s % 3600) / 60), "m");
  return two(Math.floor(s / 86_400), "d", Math.floor((s % 86_400) / 3600), "h");
}

/** A duration given in milliseconds: under a second as `250ms` (a release is that fast), else as duration(). */
export function durationMs(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))}ms` : duration(ms / 1000);
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * The one way the CLI writes a moment: the local clock time (10:42:07), with the local date in
 * front when it is not today (2026-11-30 10:42:07). Never epoch milliseconds.
 */
export function clock(at: number | string | Date, now: Date = new Date()): string {
  const t = new Date(at);
  if (Number.isNaN(t.getTime())) return String(at);
  const time = `${pad2(t.getHours())}:${pad2(t.getMinutes())}:${pad2(t.getSeconds())}`;
  const sameDay = t.getFullYear() === now.getFullYear() && t.getMonth() === now.getMonth() && t.getDate() === now.getDate();
  return sameDay ? time : `${t.getFullYear()}-${pad2(t.getMonth() + 1)}-${pad2(t.getDate())} ${time}`;
}

/** 1st, 2nd, 3rd, 4th, 11th, 22nd. */
export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** A pool as list_pools or the snapshot gives it; offer_expires_in_seconds only comes from list_pools. */
export type PoolInfo = SnapshotPool & { waiters: (SnapshotPool["waiters"][number] & { offer_expires_in_seconds?: number })[] };

/** One pool: a summary line, then its holders, then its queue in order. */
export function renderPool(p: PoolInfo): string[] {
  const queued = p.queued ? yellow(`, ${p.queued} queued`) : "";
  const head = `${p.pool}  capacity ${p.capacity}, ${p.in_use} in use, ${p.offered} offered${queued}  ${dim(`version ${p.version}, offers last ${duration(p.offer_seconds)}`)}`;
  const holders = p.holders.map(
    (h) =>
      `${dim("held by")} ${h.agent_id}${h.reason ? ` (${h.reason})` : ""}  ${dim(`weight ${h.weight}, ${duration(h.held_seconds)} held${h.pid === undefined ? "" : `, pid ${h.pid}`}`)}`,
  );
  const waiters = p.waiters.map((w, i) => {
    const state = w.state === "queued" ? (w.blocked ? "blocked" : "queued") : w.state;
    const left = w.state === "offered" && w.offer_expires_in_seconds !== undefined ? ` (${duration(w.offer_expires_in_seconds)} left)` : "";
    return `${i + 1}. ${w.agent_id}${w.reason ? ` (${w.reason})` : ""}  ${dim(`weight ${w.weight}, waiting ${duration(w.waiting_seconds)},`)} ${yellow(state + left)}${w.task ? dim(" (task)") : ""}`;
  });
  return [head, ...holders, ...waiters];
}
