// The live journal: the one incrementally updated list. Entries arrive from the change feed and
// from each snapshot's tail, possibly twice and out of order; the revision dedupes and sorts them.
import type { ChangeView } from "../domain/snapshot.ts";
import { h } from "./dom.ts";

const KEEP = 200; // entries on the page; older ones are in `airlock log`
const SHOWN_FIELDS = new Set(["revision", "at", "kind", "resource", "agent_id", "reason"]);
const EXTRA_MAX = 160; // characters of the kind's own fields, enough for a fence, a weight, a path or two

export function createJournal(list: HTMLElement) {
  const rows = new Map<number, HTMLElement>();
  let newest = 0;

  function add(c: ChangeView): void {
    if (rows.has(c.revision)) return;
    if (rows.size >= KEEP && c.revision < Math.min(...rows.keys())) return;
    const row = entry(c);
    rows.set(c.revision, row);
    if (c.revision > newest) list.prepend(row);
    else {
      // Newest on top: insert before the first older row.
      let before: HTMLElement | null = null;
      for (let i = 0; i < list.children.length; i++) {
        const el = list.children[i] as HTMLElement;
        if (Number(el.dataset.revision) < c.revision) {
          before = el;
          break;
        }
      }
      list.insertBefore(row, before);
    }
    newest = Math.max(newest, c.revision);
    while (rows.size > KEEP) {
      const last = list.lastElementChild as HTMLElement | null;
      if (!last) break;
      rows.delete(Number(last.dataset.revision));
      last.remove();
    }
  }

  return { add, newest: () => newest, size: () => rows.size };
}

function entry(c: ChangeView): HTMLElement {
  const extra = Object.entries(c)
    .filter(([k]) => !SHOWN_FIELDS.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : k.endsWith("_at") && typeof v === "number" ? clockTime(v) : JSON.stringify(v)}`)
    .join(" ");
  return h(
    "li",
    { "data-testid": "journal-entry", "data-revision": c.revision },
    h("time", { datetime: c.at }, clockTime(c.at)),
    h("span", { class: "rev" }, `#${c.revision}`),
    h("span", { class: "kind", "data-family": c.kind.split(".")[0] }, c.kind),
    h("span", { class: "res" }, c.resource),
    h("span", { class: "agent-ref" }, c.agent_id ?? ""),
    h(
      "span",
      { class: "rest", title: extra || undefined },
      c.reason ? h("span", { class: "reason" }, c.reason) : null,
      extra ? h("span", { class: "extra" }, extra.length > EXTRA_MAX ? `${extra.slice(0, EXTRA_MAX - 1)}…` : extra) : null,
    ),
  );
}

/** Local HH:MM:SS, spelled out so the column lines up in every locale. */
function clockTime(at: string | number): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return "--:--:--";
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

export function isChange(v: unknown): v is ChangeView {
  const c = v as Partial<ChangeView> | null;
  return typeof c === "object" && c !== null && typeof c.revision === "number" && typeof c.kind === "string" && typeof c.at === "string";
}
