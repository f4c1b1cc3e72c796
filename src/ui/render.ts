// One builder per dashboard section. Each rebuilds its section from the snapshot: at a few dozen
// rows that is simpler than diffing, and a row can never outlive the state it showed.
import type { Snapshot, SnapshotAgent, SnapshotPool, SnapshotRoomClaims } from "../domain/snapshot.ts";
import { agentRef, chip, countdown, elapsed, empty, h, muted, waitState, type El } from "./dom.ts";

// Past this many slots one cell per slot is too thin to read; the bar goes proportional.
const MAX_CELLS = 48;

/** deadlocked: agents in a deadlock now; atRisk: agents in a cycle that would deadlock if those away blocked. */
export function agents(snap: Snapshot, deadlocked: Set<string>, atRisk: Set<string>): El[] {
  if (!snap.agents.length) return [empty("no agents registered")];
  return snap.agents.map((a) => agent(a, deadlocked.has(a.agent_id) ? "deadlocked" : atRisk.has(a.agent_id) ? "at-risk" : ""));
}

function agent(a: SnapshotAgent, cycle: "deadlocked" | "at-risk" | ""): El {
  const holds = [
    ...a.locks.map((l) => chip("lock", l)),
    ...a.tasks.map((t) => chip("task", `#${t}`)),
    ...a.slots.map((s) => chip("slot", `${s.pool} ×${s.weight}`)),
    ...a.claims.flatMap((c) => c.paths.map((p) => chip("path", p, c.room))),
  ];
  const waits = a.waiting_for.map((w) =>
    h("li", null, chip(w.kind, w.resource), w.blocked_by.length ? [muted(" behind "), ...w.blocked_by.flatMap((id, i) => (i ? [", ", agentRef(id)] : [agentRef(id)]))] : null, " ", waitState(w.blocked)),
  );
  return h(
    "article",
    { class: `item agent ${cycle}`.trim(), "data-testid": "agent", "data-agent": a.agent_id },
    h("div", { class: "line" }, h("strong", null, a.agent_id), a.role ? h("span", { class: "role" }, a.role) : null, h("span", { class: "meta" }, "heartbeat ", countdown(a.expires_in_seconds))),
    h("div", { class: "facts" }, h("span", { class: "label" }, "holds"), h("span", { class: "chips" }, holds.length ? holds : muted("nothing"))),
    waits.length ? h("div", { class: "facts" }, h("span", { class: "label" }, "waits for"), h("ul", { class: "waits" }, waits)) : null,
  );
}

export function locks(snap: Snapshot): El[] {
  if (!snap.locks.length) return [empty("no locks held")];
  return snap.locks.map((l) =>
    h(
      "div",
      { class: "item", "data-testid": "lock", "data-name": l.name },
      h("div", { class: "line" }, h("strong", null, l.name), h("span", { class: "meta" }, `fence ${l.fence}`)),
      h("div", { class: "meta" }, "held by ", agentRef(l.agent_id), " for ", elapsed(l.held_seconds), " · expires in ", countdown(l.expires_in_seconds)),
      l.waiters.length
        ? h(
            "ol",
            { class: "line-up" },
            l.waiters.map((w, i) =>
              h("li", { "data-testid": "lock-waiter", "data-agent": w.agent_id }, h("span", { class: "pos" }, i + 1), agentRef(w.agent_id), waitState(w.blocked), taskMark(w.task), h("span", { class: "meta" }, "waiting ", elapsed(w.waiting_seconds))),
            ),
          )
        : null,
    ),
  );
}

export function pools(snap: Snapshot): El[] {
  if (!snap.pools.length) return [empty("no slot pools")];
  return snap.pools.map(pool);
}

function pool(p: SnapshotPool): El {
  const free = Math.max(0, p.capacity - p.in_use - p.offered);
  return h(
    "div",
    { class: "item", "data-testid": "pool", "data-name": p.pool },
    h("div", { class: "line" }, h("strong", null, p.pool), h("span", { class: "meta" }, `${p.in_use} in use · ${p.offered} offered · ${free} free of ${p.capacity}`)),
    capacityBar(p),
    p.holders.length
      ? h(
          "ul",
          { class: "rows" },
          p.holders.map((x) =>
            h(
              "li",
              { "data-testid": "pool-holder", "data-agent": x.agent_id },
              agentRef(x.agent_id),
              h("span", { class: "weight" }, `×${x.weight}`),
              x.reason ? h("span", { class: "reason" }, x.reason) : null,
              h("span", { class: "meta" }, x.pid === undefined ? "" : `pid ${x.pid} · `, "held ", elapsed(x.held_seconds)),
            ),
          ),
        )
      : null,
    p.waiters.length
      ? h(
          "ol",
          { class: "line-up" },
          p.waiters.map((w, i) =>
            h(
              "li",
              { "data-testid": "pool-waiter", "data-agent": w.agent_id, "data-state": w.state },
              h("span", { class: "pos" }, i + 1),
              agentRef(w.agent_id),
              h("span", { class: "weight" }, `×${w.weight}`),
              h("span", { class: `state ${w.state}` }, w.state),
              w.offer_expires_in_seconds === undefined ? null : h("span", { class: "offer" }, "offer ends in ", countdown(w.offer_expires_in_seconds, { "data-testid": "offer-countdown" }, "seconds")),
              waitState(w.blocked),
              taskMark(w.task),
              w.reason ? h("span", { class: "reason" }, w.reason) : null,
              h("span", { class: "meta" }, "waiting ", elapsed(w.waiting_seconds)),
            ),
          ),
        )
      : null,
  );
}

function capacityBar(p: SnapshotPool): El {
  const total = Math.max(p.capacity, p.in_use + p.offered, 1);
  const bar = h("div", {
    class: "bar",
    role: "meter",
    "data-testid": "capacity-bar",
    "aria-label": `${p.pool} capacity`,
    "aria-valuemin": 0,
    "aria-valuemax": p.capacity,
    "aria-valuenow": p.in_use,
    "aria-valuetext": `${p.in_use} in use, ${p.offered} offered, of ${p.capacity}`,
  });
  const parts: [string, number][] = [["used", p.in_use], ["offered", p.offered], ["free", total - p.in_use - p.offered]];
  if (total <= MAX_CELLS) {
    for (const [cls, n] of parts) for (let i = 0; i < n; i++) bar.append(h("span", { class: `cell ${cls}` }));
  } else {
    for (const [cls, n] of parts) {
      const seg = h("span", { class: `cell ${cls}` });
      seg.style.flexGrow = String(n);
      bar.append(seg);
    }
  }
  return bar;
}

type Holding = { agent_id: string; reason?: string; expires_in_seconds: number; path: string };
/** Another agent's uncommitted edit of a file (report_worktree): a mark beside the claims, never a claim. */
type Edit = { agent_id: string; branch?: string; path: string };
type Tree = { children: Map<string, Tree>; holders: Holding[]; edits: Edit[] };

export function claims(snap: Snapshot): El[] {
  const edited = (snap.worktrees ?? []).filter((w) => w.touched.length > 0);
  const rooms = [...new Set([...snap.claims.map((r) => r.room), ...edited.map((w) => w.room)])].sort();
  if (!rooms.length) return [empty("no paths claimed")];
  return rooms.map((room) => {
    const tree = claimTree(snap.claims.find((r) => r.room === room)?.claims ?? []);
    for (const w of edited.filter((x) => x.room === room)) for (const path of w.touched) nodeAt(tree, path).edits.push({ agent_id: w.agent_id, branch: w.branch, path });
    return h("div", { class: "item", "data-testid": "room", "data-room": room }, h("div", { class: "line" }, h("strong", { class: "path" }, room)), treeList(tree));
  });
}

const node = (): Tree => ({ children: new Map(), holders: [], edits: [] });

function nodeAt(root: Tree, path: string): Tree {
  let n = root;
  for (const seg of path.split("/").filter(Boolean)) {
    let next = n.children.get(seg);
    if (!next) n.children.set(seg, (next = node()));
    n = next;
  }
  return n;
}

/** `src/api/**` becomes src → api → **: a glob's segments are directories until the last. */
function claimTree(claims: SnapshotRoomClaims["claims"]): Tree {
  const root = node();
  for (const c of claims) {
    for (const path of c.paths) nodeAt(root, path).holders.push({ agent_id: c.agent_id, reason: c.reason, expires_in_seconds: c.expires_in_seconds, path });
  }
  return root;
}

function treeList(n: Tree): El {
  const entries = [...n.children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return h(
    "ul",
    { class: "tree" },
    n.holders.length ? h("li", null, h("span", { class: "seg" }, "/"), n.holders.map(holding)) : null,
    entries.map(([name, child]) =>
      h(
        "li",
        null,
        h("span", { class: child.children.size ? "seg dir" : "seg" }, child.children.size ? `${name}/` : name),
        child.holders.map(holding),
        child.edits.map(edit),
        child.children.size ? treeList({ children: child.children, holders: [], edits: [] }) : null,
      ),
    ),
  );
}

const edit = (x: Edit) =>
  h(
    "span",
    { class: "edited", "data-testid": "edited-by", "data-agent": x.agent_id, "data-path": x.path },
    "edited by ",
    agentRef(x.agent_id),
    x.branch ? h("span", { class: "meta" }, `on ${x.branch}, uncommitted`) : h("span", { class: "meta" }, "uncommitted"),
  );

const holding = (x: Holding) =>
  h(
    "span",
    { class: "holding", "data-testid": "claim", "data-agent": x.agent_id, "data-path": x.path },
    agentRef(x.agent_id),
    x.reason ? h("span", { class: "reason" }, x.reason) : null,
    h("span", { class: "meta" }, countdown(x.expires_in_seconds)),
  );

export function queues(snap: Snapshot): El[] {
  const cols = ["pending", "claimed", "done", "failed", "waiters"] as const;
  const table = snap.queues.length
    ? h(
        "table",
        null,
        h("thead", null, h("tr", null, h("th", null, "queue"), cols.map((c) => h("th", { class: "num" }, c)))),
        h(
          "tbody",
          null,
          snap.queues.map((q) => h("tr", { "data-testid": "queue", "data-name": q.queue }, h("td", null, q.queue), cols.map((c) => h("td", { class: q[c] ? "num" : "num zero" }, q[c])))),
        ),
      )
    : empty("no task queues");
  const others = [
    ...snap.events.map((e) => chip("event", `${e.name} gen ${e.generation}${e.waiters ? ` · ${e.waiters} waiting` : ""}`)),
    ...snap.counters.map((c) => chip("counter", `${c.name} = ${c.value}`)),
    chip("notes", String(snap.notes)),
  ];
  return [table, h("div", { class: "chips others" }, others)];
}

/** A waiter that is a call task (the MCP tasks extension): its client was answered with a handle and polls it. */
function taskMark(task: true | undefined): El | null {
  return task ? h("span", { class: "meta", "data-testid": "task-waiter", title: "an MCP task: the wait goes on in the daemon" }, "task") : null;
}
