// Tiny DOM builders and the live clocks. Every value on the page comes from agents, so text only
// enters through append/textContent/setAttribute: the dashboard has no innerHTML anywhere.
// (Lib references are global to the tsc program: dom.asynciterable keeps `for await` over a fetch
// body compiling in the server and the tests once lib.dom has retyped ReadableStream.)

export type El = HTMLElement | SVGElement;
type Child = El | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined>;

export const h = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: (Child | Child[])[]) =>
  fill(document.createElement(tag), attrs, children);

export const svg = <K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: (Child | Child[])[]) =>
  fill(document.createElementNS("http://www.w3.org/2000/svg", tag), attrs, children);

function fill<E extends El>(el: E, attrs: Attrs | null, children: (Child | Child[])[]): E {
  for (const [k, v] of Object.entries(attrs ?? {})) if (v !== undefined && v !== false) el.setAttribute(k, v === true ? "" : String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(typeof c === "object" ? c : String(c));
  return el;
}

/** 27s, 4m 05s, 2h 10m, 3d 4h: short enough for a dense row, exact where it matters. */
export function dur(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

// Snapshot seconds are relative to the fetch; anchoring them to wall time lets one timer tick
// every clock on the page between fetches.
// `seconds` keeps a countdown in plain seconds (an offer's "75s"), for readers that parse it.
export function countdown(seconds: number, attrs: Attrs = {}, format: "dur" | "seconds" = "dur"): El {
  const el = h("span", { class: "clock", ...attrs }, fmt(seconds, format));
  el.dataset.deadline = String(Date.now() + seconds * 1000);
  el.dataset.format = format;
  return el;
}

const fmt = (seconds: number, format: string | undefined) => (format === "seconds" ? `${Math.max(0, Math.round(seconds))}s` : dur(seconds));

export function elapsed(seconds: number): El {
  const el = h("span", { class: "clock" }, dur(seconds));
  el.dataset.since = String(Date.now() - seconds * 1000);
  return el;
}

export function tick(now = Date.now()): void {
  for (const el of document.querySelectorAll<El>("[data-deadline]")) {
    const left = Math.max(0, Math.ceil((Number(el.dataset.deadline) - now) / 1000));
    el.textContent = fmt(left, el.dataset.format);
    el.classList.toggle("expired", left === 0);
  }
  for (const el of document.querySelectorAll<El>("[data-since]")) el.textContent = dur(Math.floor((now - Number(el.dataset.since)) / 1000));
}

export const muted = (text: string) => h("span", { class: "muted" }, text);
export const empty = (text: string) => h("p", { class: "empty" }, text);
export const badge = (text: string, kind: string, title?: string) => h("span", { class: `badge ${kind}`, title }, text);
export const agentRef = (id: string) => h("span", { class: "agent-ref" }, id);

/** Blocked: the call is parked in the daemon now. Away: between calls, it keeps its place in line. */
export const waitState = (blocked: boolean) =>
  blocked ? badge("blocked", "blocked", "its call is waiting in the daemon now") : badge("away", "away", "between calls; keeps its place in line");

export const chip = (kind: string, text: string, title?: string) => h("span", { class: "chip", "data-kind": kind, title }, h("span", { class: "k" }, kind), text);
