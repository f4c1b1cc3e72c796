// The hooks' side of working trees (SPEC §13, docs/worktrees.md): report_worktree at session
// start, at edits and at the end of a turn, and the pre-edit note when another agent has an
// uncommitted edit to the file about to change. shared.ts calls in here at each hook point.
// - What is reported: `git status --porcelain=v2 --branch -z` in the file's checkout (one git
//   process gives the branch, HEAD and the uncommitted paths), bounded by STATUS_BUDGET_MS and
//   MAX_DIRTY paths: a status over either is cut there, and the session's touched paths are then
//   kept as dirty (a cut status cannot say they were committed). `--no-optional-locks`: a hook
//   must never take git's index lock from under the agent's own git commands.
// - touched: the files this session's edits targeted. The pre-edit hook records the target
//   before the edit runs, so that report counts the target as dirty; the next report's status
//   says whether it really is (an edit that failed leaves again).
// - Debounce: at most one report per checkout per REPORT_EVERY_MS per session; a target
//   recorded meanwhile waits in the session's state file and goes with the next report, and
//   the stop hook (the end of every turn) always sends what waits, and refreshes a report older
//   than REFRESH_AFTER_MS so a live session's report does not lapse.
// - State between invocations (each hook is a new process): one small JSON file per session in
//   ~/.airlock/hooks/ (0700), `{sent: {top: ms}, pending: {top: [paths]}}`, written by rename.
//   Two hooks of one session at the same instant may lose a pending path: the next status
//   still lists the file as dirty, only not as touched.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { airlockHome, ensurePrivateDir } from "../../config/dirs.ts";
import { env } from "../../config/env.ts";
import { errorMessage } from "../../errors.ts";
import { MAX_DIRTY } from "../../domain/worktrees.ts";
import { checkoutTop } from "../../machine/repo.ts";

/** A session edits in bursts: one report per 10 s of them is current enough for another agent's check. */
export const REPORT_EVERY_MS = 10_000;
/** `git status` on a large repository: past this, the report goes with what it listed so far. */
export const STATUS_BUDGET_MS = 2000;
/** Its output, read at most (2,000 paths of a deep tree are well under it). */
const STATUS_MAX_BYTES = 4 * 1024 * 1024;
/** The stop hook re-sends a report older than this: well inside the daemon's 2 h lapse. */
export const REFRESH_AFTER_MS = 15 * 60_000;
/** State files of sessions not seen for this long are removed at a session start. */
const STATE_KEEP_MS = 7 * 24 * 3600 * 1000;

export type EditPolicy = "advisory" | "strict";

export interface EditedByView {
  path: string;
  agent_id: string;
  branch?: string;
  since: string;
}

export interface GitStatus {
  branch?: string;
  head?: string;
  dirty: string[];
  /** Cut by the time budget or the path cap. */
  truncated: boolean;
}

type Tool = (name: string, args: Record<string, unknown>) => Promise<unknown>;

/** AIRLOCK_EDIT_POLICY=strict: another agent's uncommitted edit blocks like a claim; else it is said. */
export function editPolicy(given: string | undefined = env.editPolicy): { policy: EditPolicy; warning?: string } {
  const raw = given?.trim().toLowerCase();
  if (raw === undefined || raw === "" || raw === "advisory") return { policy: "advisory" };
  if (raw === "strict") return { policy: "strict" };
  return { policy: "advisory", warning: `AIRLOCK_EDIT_POLICY must be advisory or strict (got ${JSON.stringify(raw)}); using advisory` };
}

/** What the model is told (or, under strict, why the edit is refused). No angle brackets: Codex escapes them. */
export function editedByMessage(agentId: string, edited: readonly EditedByView[], strict: boolean): string {
  // Paths, branches and agent ids are other agents' data: a `<` in them would reach Codex's model escaped.
  const safe = (x: string) => x.replace(/</g, "‹").replace(/>/g, "›");
  const lines = edited.map((e) => `- ${safe(e.path)}: uncommitted edit by ${safe(e.agent_id)}${e.branch ? ` on branch ${safe(e.branch)}` : ""} (since ${e.since})`);
  const who = [...new Set(edited.map((e) => safe(e.agent_id)))];
  return [
    `Airlock: another agent has uncommitted changes to ${edited.length === 1 ? "a file" : "files"} you are about to edit.`,
    ...lines,
    strict
      ? "The user's policy (AIRLOCK_EDIT_POLICY=strict) refuses this edit until those changes are committed or reverted. "
      : "This is not a claim, and your edit goes ahead; but you may overwrite or conflict with their work. ",
    `Coordinate first: send_message(from="${agentId}", to=${JSON.stringify(who)}, body="...") to ask, or leave the file to them.`,
  ].join("\n");
}

/** `git status` of a checkout within the budget; undefined when git cannot tell (no git, not a repository). */
export async function gitStatus(top: string, budgetMs = STATUS_BUDGET_MS, maxPaths = MAX_DIRTY): Promise<GitStatus | undefined> {
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(["git", "--no-optional-locks", "-C", top, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal"], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
      env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
    });
  } catch {
    return undefined;
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill(9);
  }, budgetMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size > STATUS_MAX_BYTES) {
        timedOut = true;
        proc.kill(9);
        break;
      }
    }
    const code = await proc.exited;
    if (code !== 0 && !timedOut) return undefined;
  } finally {
    clearTimeout(timer);
  }
  const s = parseStatus(Buffer.concat(chunks).toString("utf8"), maxPaths);
  return timedOut ? { ...s, truncated: true } : s;
}

/** Porcelain v2 with -z: `# branch.*` headers, then entries; a rename's original path follows it. */
export function parseStatus(out: string, maxPaths = MAX_DIRTY): GitStatus {
  const s: GitStatus = { dirty: [], truncated: false };
  const fields = out.split("\0");
  // A cut output's last field may be half a path: drop it (a complete output ends with "\0").
  if (fields[fields.length - 1] !== "") fields.pop();
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f === "") continue;
    if (f.startsWith("# branch.oid ")) {
      const oid = f.slice("# branch.oid ".length);
      if (/^[0-9a-f]+$/i.test(oid)) s.head = oid;
      continue;
    }
    if (f.startsWith("# branch.head ")) {
      const b = f.slice("# branch.head ".length);
      if (b !== "(detached)") s.branch = b;
      continue;
    }
    if (f.startsWith("#")) continue;
    let path: string | undefined;
    if (f.startsWith("1 ")) path = nth(f, 8);
    else if (f.startsWith("2 ")) {
      path = nth(f, 9);
      i++; // the original path of a rename or copy
    } else if (f.startsWith("u ")) path = nth(f, 10);
    else if (f.startsWith("? ")) path = f.slice(2);
    if (path === undefined || path === "") continue;
    if (s.dirty.length >= maxPaths) {
      s.truncated = true;
      break;
    }
    s.dirty.push(path);
  }
  return s;
}

/** The text after the n-th space (porcelain v2's path field, which may itself hold spaces). */
function nth(f: string, n: number): string | undefined {
  let at = -1;
  for (let k = 0; k < n; k++) {
    at = f.indexOf(" ", at + 1);
    if (at < 0) return undefined;
  }
  return f.slice(at + 1);
}

interface State {
  sent: Record<string, number>;
  pending: Record<string, string[]>;
}

function stateDir(): string {
  return join(airlockHome(), "hooks");
}

function stateFile(agentId: string): string {
  return join(stateDir(), `worktree-${createHash("sha256").update(agentId).digest("hex").slice(0, 32)}.json`);
}

function readState(agentId: string): State {
  try {
    const v = JSON.parse(readFileSync(stateFile(agentId), "utf8")) as Partial<State>;
    return { sent: v.sent ?? {}, pending: v.pending ?? {} };
  } catch {
    return { sent: {}, pending: {} };
  }
}

function writeState(agentId: string, s: State): void {
  ensurePrivateDir(stateDir());
  const file = stateFile(agentId);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(s), { mode: 0o600 });
  renameSync(tmp, file);
}

/** Old sessions' state files go (a session start is rare enough to look). */
function sweepStates(now: number): void {
  try {
    for (const f of readdirSync(stateDir())) {
      const p = join(stateDir(), f);
      if (f.startsWith("worktree-") && now - statSync(p).mtimeMs > STATE_KEEP_MS) rmSync(p, { force: true });
    }
  } catch {
    // No directory yet: nothing to sweep.
  }
}

export type ReportWhy = "session-start" | "edit" | "stop";

/**
 * Reports each checkout that is due: at session start the cwd's; at an edit the targets' (their
 * files recorded as touched, sent at once unless debounced); at stop every checkout with a pending
 * path or an old report. Never throws: a report is best effort, and what it could not do goes to
 * the returned line for stderr (the hook's decision does not depend on it).
 */
export async function reportWorktrees(tool: Tool, agentId: string, why: ReportWhy, where: { cwd?: string; files?: readonly string[] }): Promise<string | undefined> {
  const problems: string[] = [];
  try {
    const now = Date.now();
    const state = readState(agentId);
    const due = new Set<string>();
    const editing = new Map<string, string[]>();
    if (why === "session-start") {
      sweepStates(now);
      const top = checkoutTop(where.cwd ?? process.cwd());
      if (top) due.add(top);
    }
    for (const file of where.files ?? []) {
      const top = checkoutTop(join(file, ".."));
      if (!top) continue;
      const rel = relative(top, file);
      if (rel === "" || rel.startsWith("..")) continue;
      editing.set(top, [...(editing.get(top) ?? []), rel]);
      state.pending[top] = [...new Set([...(state.pending[top] ?? []), rel])];
      if (now - (state.sent[top] ?? 0) >= REPORT_EVERY_MS) due.add(top);
    }
    if (why === "stop") {
      for (const top of Object.keys(state.pending)) if ((state.pending[top] ?? []).length > 0) due.add(top);
      for (const [top, at] of Object.entries(state.sent)) if (now - at >= REFRESH_AFTER_MS) due.add(top);
    }
    for (const top of due) {
      const status = await gitStatus(top);
      // Not a repository git can read (or no git): nothing to report, and nothing to say.
      if (!status) {
        delete state.pending[top];
        continue;
      }
      const touched = state.pending[top] ?? [];
      // The files being edited now are dirty from this edit on; a cut status keeps every touched path.
      const extra = status.truncated ? touched : (editing.get(top) ?? []);
      const dirty = [...new Set([...status.dirty.slice(0, MAX_DIRTY - extra.length), ...extra])];
      try {
        await tool("report_worktree", { agent_id: agentId, room: top, dirty, touched, ...(status.branch ? { branch: status.branch } : {}), ...(status.head ? { head: status.head } : {}) });
        state.sent[top] = now;
        delete state.pending[top];
      } catch (err) {
        problems.push(`report_worktree: ${errorMessage(err)}`);
      }
    }
    if (due.size > 0 || editing.size > 0) writeState(agentId, state);
  } catch (err) {
    problems.push(errorMessage(err));
  }
  return problems.length > 0 ? `airlock hook: worktree report: ${problems.join("; ")}\n` : undefined;
}
