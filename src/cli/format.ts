// Human rendering of a status snapshot, shared by `status` and `watch`.
import { colors } from "consola/utils";
import { env } from "../config/env.ts";
import type { Snapshot } from "../domain/snapshot.ts";

const c = (fn: (s: string) => string) => (s: string) => (env.noColor ? s : fn(s));
const bold = c(colors.bold);
const dim = c(colors.dim);
const yellow = c(colors.yellow);

function section(title: string, rows: string[]): string {
  return [bold(`${title} (${rows.length})`), ...(rows.length ? rows.map((r) => `  ${r}`) : [dim("  (none)")]), ""].join("\n");
}

export function renderStatus(s: Snapshot, where: string): string {
  const head = `${bold("Airlock")} — ${where}${s.source === "database" ? yellow("  (daemon not running: read from the database)") : ""}\n`;
  const locks = s.locks.map((l) => {
    const q = l.queue_depth ? yellow(`  ${l.queue_depth} waiting: ${l.waiters.map((w) => `${w.agent_id}${w.blocked ? "" : dim(" (away)")}`).join(", ")}`) : "";
    return `${l.name}  ${dim("held by")} ${l.agent_id}  ${dim(`${l.held_seconds}s held, expires in ${l.expires_in_seconds}s, fence ${l.fence}`)}${q}`;
  });
  const agents = s.agents.map((a) => {
    const holds = [...a.locks.map((n) => `lock ${n}`), ...a.tasks.map((t) => `task #${t}`)];
    return `${a.agent_id}${a.role ? ` [${a.role}]` : ""}  ${dim(`heartbeat expires in ${a.expires_in_seconds}s`)}${holds.length ? `  holds ${holds.join(", ")}` : ""}`;
  });
  const queues = s.queues.map(
    (q) => `${q.queue}  ${q.pending} pending, ${q.claimed} claimed, ${q.done} done, ${q.failed} failed${q.waiters ? yellow(`, ${q.waiters} waiting`) : ""}`,
  );
  const events = s.events.map((e) => `${e.name}  generation ${e.generation}${e.waiters ? yellow(`, ${e.waiters} waiting`) : ""}`);
  const counters = s.counters.map((x) => `${x.name} = ${x.value}`);
  return [
    head,
    section("LOCKS", locks),
    section("AGENTS", agents),
    section("QUEUES", queues),
    section("EVENTS", events),
    section("COUNTERS", counters),
    `${bold("NOTES")} ${s.notes}`,
  ].join("\n");
}
