// The dashboard's entry. The snapshot is the truth and the change feed only says when to fetch it
// again: a lost, repeated or reordered event can delay the picture, never corrupt it.
import type { Snapshot } from "../domain/snapshot.ts";
import { h, tick, type El } from "./dom.ts";
import { graph } from "./graph.ts";
import { createJournal, isChange } from "./journal.ts";
import { MESSAGES_URL, messagesPanel, type PanelEntry } from "./messages.ts";
import { agents, claims, locks, pools, queues } from "./render.ts";

const STATUS_URL = "/ui/api/status";
const CHANGES_URL = "/ui/api/changes";
const DEBOUNCE_MS = 50; // a burst of changes (a release that wakes a waiter) becomes one fetch
const RETRY_MS = 2000; // only after the browser gave up on the feed; it retries transient drops itself
const THEME_KEY = "airlock.theme";

const $ = (testid: string) => document.querySelector<HTMLElement>(`[data-testid="${testid}"]`)!;
const journal = createJournal($("journal").querySelector("ol")!);

let seen = 0; // newest revision seen, from a snapshot or the feed: where a new feed starts
let sessionGone = false; // a 401: nothing will work until `airlock ui` logs the browser in again
let inFlight = false;
let again = false;
let pending: ReturnType<typeof setTimeout> | undefined;

/** At most one fetch in flight; anything asked for meanwhile becomes exactly one more after it. */
function schedule(delay = DEBOUNCE_MS): void {
  if (pending !== undefined) return;
  pending = setTimeout(() => {
    pending = undefined;
    void refresh();
  }, delay);
}

async function refresh(): Promise<void> {
  if (inFlight) {
    again = true;
    return;
  }
  inFlight = true;
  try {
    await load();
  } finally {
    inFlight = false;
    if (again) {
      again = false;
      void refresh();
    }
  }
}

async function load(): Promise<void> {
  let res: Response;
  try {
    res = await fetch(STATUS_URL, { cache: "no-store", credentials: "same-origin" });
  } catch {
    return banner("Cannot reach the Airlock daemon; retrying.");
  }
  sessionGone = res.status === 401;
  if (sessionGone) return banner("Session expired: run ", h("code", null, "airlock ui"), " again");
  if (!res.ok) return banner(`Status request failed (HTTP ${res.status}); retrying.`);
  let snap: Snapshot;
  try {
    snap = (await res.json()) as Snapshot;
  } catch {
    return banner("The daemon sent a status that is not JSON; retrying.");
  }
  banner();
  apply(snap);
  await loadMessages();
  // The first snapshot ends the loading state (the journal's placeholder too).
  for (const el of document.querySelectorAll("[data-testid=loading]")) el.remove();
  document.querySelector("main")?.removeAttribute("aria-busy");
}

function apply(snap: Snapshot): void {
  for (const c of snap.journal ?? []) journal.add(c);
  seen = Math.max(seen, snap.revision);
  // The daemon's two kinds, as the snapshot sorts them: in a deadlock now, or in a cycle that would be one.
  const deadlocked = new Set((snap.graph?.deadlocks ?? []).flatMap((d) => d.cycle.map((s) => s.agent_id)));
  const atRisk = new Set((snap.graph?.would_deadlock ?? []).flatMap((c) => c.cycle.map((s) => s.agent_id)));
  // On a shared store, say so: the page shows the team's state, kept by this many daemons.
  $("source").textContent = snap.daemons === undefined ? snap.source : `${snap.source} · shared store, ${snap.daemons} daemon${snap.daemons === 1 ? "" : "s"}`;
  $("revision").textContent = `rev ${snap.revision}`;
  section("graph", snap.graph?.edges.length ?? 0, snap.graph ? graph(snap) : []);
  $("graph").classList.toggle("alarm", deadlocked.size > 0);
  $("graph").classList.toggle("caution", deadlocked.size === 0 && atRisk.size > 0);
  section("agents", snap.agents.length, agents(snap, deadlocked, atRisk));
  section("locks", snap.locks.length, locks(snap));
  section("pools", snap.pools.length, pools(snap));
  section("claims", snap.claims.reduce((n, r) => n + r.claims.length, 0), claims(snap));
  section("queues", snap.queues.length, queues(snap));
  count("journal", journal.size());
  document.body.dataset.revision = String(Math.max(snap.revision, journal.newest()));
}

/** The messages panel, from its own endpoint: bodies are not in the snapshot (or the feed). */
async function loadMessages(): Promise<void> {
  try {
    const res = await fetch(MESSAGES_URL, { cache: "no-store", credentials: "same-origin" });
    if (!res.ok) return;
    const entries = (await res.json()) as PanelEntry[];
    section("messages", entries.length, messagesPanel(entries));
  } catch {
    // The status banner says when the daemon is unreachable; the panel keeps what it showed.
  }
}

function section(testid: string, n: number, nodes: El[]): void {
  count(testid, n);
  $(testid).querySelector(".body")!.replaceChildren(...nodes);
}

function count(testid: string, n: number): void {
  $(testid).querySelector(".count")!.textContent = String(n);
}

function banner(...message: (El | string)[]): void {
  const el = $("banner");
  el.replaceChildren(...message);
  el.hidden = message.length === 0;
}

function connect(): void {
  const feed = new EventSource(`${CHANGES_URL}?since=${seen}`);
  feed.onopen = () => {
    live(true);
    // Catches whatever happened while the feed was down, and clears a stale error banner.
    schedule();
  };
  feed.onerror = () => {
    live(false);
    // CONNECTING means the browser retries by itself, sending Last-Event-ID; CLOSED (a 401, a
    // wrong content type) means it gave up, and a new feed from the last revision seen is ours to open.
    if (feed.readyState !== EventSource.CLOSED) return;
    feed.close();
    setTimeout(async () => {
      await refresh();
      // An expired session stays expired: say so once, instead of knocking every 2 s.
      if (!sessionGone) connect();
    }, RETRY_MS);
  };
  feed.addEventListener("change", (e: MessageEvent<string>) => {
    let c: unknown;
    try {
      c = JSON.parse(e.data);
    } catch {
      return;
    }
    if (!isChange(c)) return;
    journal.add(c);
    count("journal", journal.size());
    seen = Math.max(seen, c.revision);
    schedule();
  });
  feed.addEventListener("trimmed", () => schedule());
  // Someone joined, left or stopped blocking in a line: not a journal change, but it shows.
  feed.addEventListener("waits", () => schedule());
}

function live(on: boolean): void {
  const el = $("connection");
  el.textContent = on ? "live" : "reconnecting…";
  el.dataset.state = on ? "live" : "reconnecting";
}

type Mode = "auto" | "light" | "dark";
const MODES: Mode[] = ["auto", "light", "dark"];
const systemDark = matchMedia("(prefers-color-scheme: dark)");

function storedMode(): Mode {
  try {
    const m = localStorage.getItem(THEME_KEY);
    return MODES.find((x) => x === m) ?? "auto";
  } catch {
    return "auto"; // storage can be off (private windows, policies); the page still works
  }
}

function applyTheme(mode = storedMode()): void {
  document.documentElement.dataset.theme = mode === "auto" ? (systemDark.matches ? "dark" : "light") : mode;
  const btn = $("theme-toggle");
  btn.textContent = `theme: ${mode}`;
  btn.dataset.mode = mode;
}

$("theme-toggle").addEventListener("click", () => {
  const next = MODES[(MODES.indexOf(storedMode()) + 1) % MODES.length]!;
  try {
    localStorage.setItem(THEME_KEY, next);
  } catch {}
  applyTheme(next);
});
systemDark.addEventListener("change", () => applyTheme());

applyTheme();
// No live(false) here: the page says "connecting…" (index.html) until the feed opens or fails.
setInterval(tick, 1000);
await refresh();
connect();
