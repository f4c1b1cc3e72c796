// The wait-for graph as inline SVG, and its cycles as text. Agents sit on an ellipse (sorted, so a
// refresh does not shuffle them); an edge points from the waiter to whoever is in its way. Edges
// between the same two agents bow apart so a two-agent deadlock shows both arrows.
// Cycles come in the daemon's two kinds, as the snapshot sorts them (and `airlock status` says
// them): a deadlock (everyone in it blocked right now) in red; a cycle that would deadlock if the
// agents between calls blocked, in amber, naming them.
import { type CycleStep, wouldDeadlockLabel } from "../domain/deadlock.ts";
import type { Snapshot, WaitEdgeView } from "../domain/snapshot.ts";
import { h, svg, type El } from "./dom.ts";

const NODE_H = 26;
const LABEL_MAX = 26; // characters: longer resource names get an ellipsis and a tooltip
const LABEL_OFF = 9; // px between an edge and its label
const BOW = 44; // px between the apexes of parallel edges, enough to keep their labels apart

type Pt = { x: number; y: number };
type Node = Pt & { id: string; w: number };

const short = (s: string) => (s.length > LABEL_MAX ? `${s.slice(0, LABEL_MAX - 1)}…` : s);
const edgeKey = (e: { agent_id: string; waits_for: string; resource: string }) => JSON.stringify([e.agent_id, e.waits_for, e.resource]);

export function graph(snap: Snapshot): El[] {
  const { edges, deadlocks, would_deadlock: would } = snap.graph;
  if (!edges.length) return [h("p", { class: "empty" }, "nobody waits")];
  const inDeadlock = new Set(deadlocks.flatMap((d) => d.cycle.map(edgeKey)));
  const inRisk = new Set(would.flatMap((c) => c.cycle.map(edgeKey)));
  const cycleOf = (e: WaitEdgeView): Cycle => (inDeadlock.has(edgeKey(e)) ? "deadlock" : inRisk.has(edgeKey(e)) ? "risk" : null);
  const kinds = new Map(edges.map((e) => [edgeKey(e), e.kind]));

  const ids = [...new Set(edges.flatMap((e) => [e.agent_id, e.waits_for]))].sort();
  const { nodes, width, height } = layout(ids, edges.some((e) => e.agent_id === e.waits_for));
  const byId = new Map(nodes.map((n) => [n.id, n]));

  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "wait-for graph" }, markers());
  for (const n of nodes) {
    root.append(
      svg(
        "g",
        { class: "node", "data-agent": n.id },
        svg("title", null, n.id),
        svg("rect", { x: n.x - n.w / 2, y: n.y - NODE_H / 2, width: n.w, height: NODE_H, rx: NODE_H / 2 }),
        svg("text", { x: n.x, y: n.y, "text-anchor": "middle", "dominant-baseline": "central" }, short(n.id)),
      ),
    );
  }
  // Cycle edges last (deadlocks on top), so they are drawn over anything they cross.
  const rank = (e: WaitEdgeView) => ({ deadlock: 2, risk: 1, none: 0 })[cycleOf(e) ?? "none"];
  const ordered = [...edges].sort((a, b) => rank(a) - rank(b));
  const bows = bowOffsets(edges);
  for (const e of ordered) root.append(edge(e, byId.get(e.agent_id)!, byId.get(e.waits_for)!, bows.get(e) ?? 0, cycleOf(e)));

  const legend = h(
    "p",
    { class: "legend" },
    "solid: blocked now · dashed: away, keeps its place · ",
    h("span", { class: "warn" }, "red: deadlock"),
    " · ",
    h("span", { class: "risk" }, "amber: would deadlock if the agents away block"),
  );
  const steps = (c: CycleStep[]) => [...c.flatMap((s) => [s.agent_id, ` → (${[kinds.get(edgeKey(s)), s.resource].filter(Boolean).join(" ")}) → `]), c[0]?.agent_id ?? ""];
  const items = [
    ...deadlocks.map((d) => h("li", { "data-testid": "cycle" }, h("strong", null, "deadlock: "), steps(d.cycle))),
    ...would.map((c) =>
      h("li", { class: "risk", "data-testid": "would-deadlock", "data-between": c.between_calls.join(" ") }, h("strong", null, `${wouldDeadlockLabel(c.between_calls)}: `), steps(c.cycle)),
    ),
  ];
  return [h("div", { class: "graph" }, root), ...(items.length ? [h("ul", { class: "cycles" }, items)] : []), legend];
}

type Cycle = "deadlock" | "risk" | null;


function layout(ids: string[], loops: boolean): { nodes: Node[]; width: number; height: number } {
  const n = ids.length;
  const rx = n <= 2 ? 180 : 230;
  const ry = n <= 2 ? 0 : Math.min(150, 40 + 20 * n);
  // Two agents face each other left and right; more start at the top and go clockwise.
  const start = n === 2 ? Math.PI : -Math.PI / 2;
  const nodes = ids.map((id, i) => {
    const a = start + (2 * Math.PI * i) / n;
    return { id, x: n === 1 ? 0 : rx * Math.cos(a), y: n === 1 ? 0 : ry * Math.sin(a), w: Math.max(60, short(id).length * 7.4 + 22) };
  });
  // Crop to the nodes: room for bowed edges' labels, and above for an agent waiting on itself.
  const left = Math.min(...nodes.map((p) => p.x - p.w / 2)) - 12;
  const right = Math.max(...nodes.map((p) => p.x + p.w / 2)) + 12;
  const top = Math.min(...nodes.map((p) => p.y)) - (loops ? 90 : 40);
  for (const p of nodes) {
    p.x -= left;
    p.y -= top;
  }
  return { nodes, width: right - left, height: Math.max(...nodes.map((p) => p.y)) + 40 };
}

/** Each edge's sideways offset: 0 when alone between its two agents, else spread either side. */
function bowOffsets(edges: WaitEdgeView[]): Map<WaitEdgeView, number> {
  const pairs = new Map<string, WaitEdgeView[]>();
  for (const e of edges) {
    const key = JSON.stringify([e.agent_id, e.waits_for].sort());
    pairs.set(key, [...(pairs.get(key) ?? []), e]);
  }
  const out = new Map<WaitEdgeView, number>();
  for (const group of pairs.values()) {
    group.forEach((e, i) => {
      // Offsets are measured in the pair's canonical direction (lower id to higher), so a → b and b → a land on opposite sides.
      const flip = e.agent_id < e.waits_for ? 1 : -1;
      out.set(e, flip * (i - (group.length - 1) / 2) * BOW * (group.length > 1 ? 1 : 0));
    });
  }
  return out;
}

function edge(e: WaitEdgeView, from: Node, to: Node, bow: number, cycle: Cycle): El {
  const label = `${e.kind} ${e.resource}`;
  let d: string;
  let mid: Pt;
  if (from === to) {
    const top = from.y - NODE_H / 2;
    d = `M ${from.x - 12} ${top} C ${from.x - 50} ${top - 60}, ${from.x + 50} ${top - 60}, ${from.x + 12} ${top}`;
    mid = { x: from.x, y: top - 52 };
  } else {
    const dx = to.x - from.x;
    const dy = to.y - from.y;
    const len = Math.hypot(dx, dy);
    // The quadratic's control point sits twice as far out as the curve's apex.
    const c = { x: (from.x + to.x) / 2 - (dy / len) * bow * 2, y: (from.y + to.y) / 2 + (dx / len) * bow * 2 };
    const s = rim(from, c, 3);
    const t = rim(to, c, 6);
    d = `M ${s.x} ${s.y} Q ${c.x} ${c.y} ${t.x} ${t.y}`;
    // The label sits just off the line, on the bowed side (above a straight one), so it hides neither line nor arrowhead.
    const side = bow !== 0 ? Math.sign(bow) : dx / len > 0 ? -1 : 1;
    mid = { x: 0.25 * s.x + 0.5 * c.x + 0.25 * t.x - (dy / len) * side * LABEL_OFF, y: 0.25 * s.y + 0.5 * c.y + 0.25 * t.y + (dx / len) * side * LABEL_OFF };
  }
  return svg(
    "g",
    {
      class: ["edge", e.kind, e.blocked ? "blocked" : "away", cycle === "deadlock" ? "cycle" : cycle === "risk" ? "risk" : ""].join(" ").trim(),
      "data-testid": cycle === "deadlock" ? "cycle-edge" : cycle === "risk" ? "risk-edge" : "graph-edge",
      "data-from": e.agent_id,
      "data-to": e.waits_for,
      "data-resource": e.resource,
    },
    svg("title", null, `${e.agent_id} waits for ${e.waits_for}: ${label}${e.blocked ? " (blocked)" : " (away)"}`),
    svg("path", { d, "marker-end": cycle === "deadlock" ? "url(#arrow-cycle)" : cycle === "risk" ? "url(#arrow-risk)" : "url(#arrow)" }),
    svg("text", { x: mid.x, y: mid.y, "text-anchor": "middle", "dominant-baseline": "central" }, short(label)),
  );
}

/** Where the line from the node's centre towards `toward` leaves its pill (treated as an ellipse), plus a gap. */
function rim(n: Node, toward: Pt, gap: number): Pt {
  const dx = toward.x - n.x;
  const dy = toward.y - n.y;
  const len = Math.hypot(dx, dy) || 1;
  const ux = dx / len;
  const uy = dy / len;
  const r = 1 / Math.hypot(ux / (n.w / 2 + 2), uy / (NODE_H / 2 + 2)) + gap;
  return { x: n.x + ux * r, y: n.y + uy * r };
}

const markers = () =>
  svg(
    "defs",
    null,
    ["arrow", "arrow-cycle", "arrow-risk"].map((id) =>
      svg("marker", { id, class: id, viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M0,0 L10,5 L0,10 z" })),
    ),
  );
