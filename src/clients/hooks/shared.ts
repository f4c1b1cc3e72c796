// What every client's hooks share: the three Airlock decisions (session start, pre-edit, stop)
// made once, against the daemon, and handed to a per-client adapter that speaks the client's
// documented hook wire format. A hook sits in the path of every edit the model makes, so it
// must answer fast and never wedge the client: every daemon call has a short timeout, stdin is
// read with a bound, and anything unexpected (daemon down, daemon error, malformed input)
// fails open — the tool call or the stop is allowed — but never silently: the adapter puts the
// warning where the client shows it to the user (Claude Code and Codex: `systemMessage`), every
// time, and one line goes to stderr for the client's log. Hook text never holds `<` or `>`:
// Codex HTML-escapes them before the model reads them.
//
// Room and paths (SPEC §6, "A room is a repository"; the convention `airlock claim` / `check`
// use too): pre-edit passes each file's absolute path with room = the top level of each checkout
// it is in (every directory at or above it holding `.git`: a submodule or a nested repository is
// inside its parent's tree too, and a claim made from the parent must stop an edit inside it),
// and the daemon resolves that directory to its repository's room, so a claim in one repository
// never blocks an edit in another, while every worktree and clone of one repository shares its
// claims. check_paths also covers the repository's older room names and `default` (claims made
// without room) server-side, so the usual edit costs one call. The policy tells models to pass
// the top level of their working directory's checkout as room. A file outside any repository is
// checked in the room of the hook's cwd; a file outside that too cannot be inside a claim and is
// allowed. A recognised edit tool whose target the adapter cannot read fails open, visibly.
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { errorMessage } from "../../errors.ts";
import type { Snapshot } from "../../domain/snapshot.ts";
import { checkoutTop, checkoutTops, readCheckout, roomOfDir } from "../../machine/repo.ts";
import { policyText } from "../policy.ts";
import { type Deliver, inboxText, stopWithInbox } from "./inbox.ts";
import { editedByMessage, type EditedByView, editPolicy, reportWorktrees } from "./worktree.ts";

export const HOOK_EVENTS = ["session-start", "pre-edit", "post-tool", "prompt", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/**
 * Each daemon call: a local call answers in milliseconds, but on a machine loaded by the very
 * builds Airlock schedules a second or two is seen; 5 s means it is wedged.
 */
export const DAEMON_TIMEOUT_MS = 5000;
/** Reading stdin: clients write the JSON and close the pipe at once; a pipe left open must not hang us. */
export const STDIN_TIMEOUT_MS = 1000;
/** A hook payload is a few KB (a Write carries the file's content); beyond this, fail open. */
export const STDIN_MAX_BYTES = 8 * 1024 * 1024;
/**
 * The whole hook, whatever happens: well inside the shortest client limit (60 s by default), and
 * long enough that a loaded machine does not turn a check into a fail-open.
 */
export const HOOK_DEADLINE_MS = 15_000;
/** The session-start summary stays one screen: this many lines per section, then "… and N more". */
const SUMMARY_LINES = 8;

export type HookInput = Record<string, unknown>;

/** What the hook process does: print stdout (if any), print stderr (if any), exit with code. */
export interface HookOutput {
  stdout?: string;
  stderr?: string;
  code: number;
}

/** One client's documented hook contract: how to read its JSON, how to answer it. */
export interface HookAdapter {
  client: string;
  /** Where the contract is documented (cited in the file header and in `airlock hook --help`). */
  docs: string[];
  events: readonly HookEvent[];
  /** The session id from the hook JSON; the agent id is `<client>:<session id>`. */
  sessionId(input: HookInput): string | undefined;
  /** The hook's working directory (the project), if the JSON carries one. */
  cwd(input: HookInput): string | undefined;
  /**
   * Files a tool call is about to write; undefined when the call is not a file-writing tool, []
   * when it is one but names no file the adapter can read (pre-edit then fails open, visibly).
   */
  editTargets(input: HookInput): string[] | undefined;
  /** True when the client says this stop already follows a hook-forced continuation (loop guard). */
  stopAlreadyContinued(input: HookInput): boolean;
  /** Nothing to say: let the event proceed. */
  allow(event: HookEvent): HookOutput;
  sessionContext(text: string): HookOutput;
  denyEdit(message: string): HookOutput;
  /** Lets an edit go with a note to the model (another agent's uncommitted edit); none: the user is told instead. */
  noteEdit?(message: string): HookOutput;
  blockStop(reason: string): HookOutput;
  /** Text for the model at a tool boundary (post-tool) or with the user's prompt (prompt): other agents' messages. */
  context(event: "post-tool" | "prompt", text: string): HookOutput;
  /** Adds a message the user sees (not the model) to an answer, keeping its decision. */
  warnUser(out: HookOutput, message: string): HookOutput;
}

/** What the hooks need from the daemon; tests pass a fake, the CLI the real HTTP client. */
export interface HookDeps {
  /** tools/call; resolves to the tool's JSON result, rejects when the daemon is down or the tool errs. */
  tool(name: string, args: Record<string, unknown>): Promise<unknown>;
  /** airlock/status */
  status(): Promise<Snapshot>;
  /** airlock/deliver: this session's undelivered messages, marked delivered (inbox.ts); absent, none are. */
  deliver?: Deliver;
  /** The checkouts a file is in, innermost first (see the header); defaults to walking up for `.git`. */
  repoRoots?(file: string): string[];
  /** The room the daemon will resolve a directory to (the session summary marks it); defaults to reading git's files. */
  roomOf?(dir: string): string | undefined;
}

export interface ConflictView {
  /** Set when the claim is in another room than the one asked about (an alias, or `default`). */
  room?: string;
  path: string;
  held_by: string;
  held_path: string;
  witness: string;
  reason?: string;
  expires_in_seconds: number;
}

interface PoolView {
  pool: string;
  offer_seconds?: number;
  waiters: { agent_id: string; state: string; offer_expires_in_seconds?: number }[];
}

/** Reads all of stdin, or gives up after `timeoutMs` or `maxBytes` (undefined then). */
export async function readStdin(
  stream: ReadableStream<Uint8Array> = Bun.stdin.stream(),
  timeoutMs = STDIN_TIMEOUT_MS,
  maxBytes = STDIN_MAX_BYTES,
): Promise<string | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => {
    timer = setTimeout(() => r("timeout"), timeoutMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === "timeout") return undefined;
      if (next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) return undefined;
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The nearest directory at or above `file`'s directory holding `.git`. */
export function gitRoot(file: string): string | undefined {
  return checkoutTop(dirname(file));
}

/**
 * Every directory at or above `file`'s directory holding `.git`, innermost first; an outer one
 * of the same repository (a linked worktree kept inside its main worktree) is left out, since
 * the inner one is its room with the right paths.
 */
export function gitRoots(file: string): string[] {
  const tops = checkoutTops(dirname(file));
  if (tops.length < 2) return tops;
  const seen = new Set<string>();
  return tops.filter((top) => {
    const common = readCheckout(top)?.commonDir;
    if (common === undefined) return true;
    if (seen.has(common)) return false;
    seen.add(common);
    return true;
  });
}

/**
 * Where a target file is checked: its absolute path, in the room of each checkout it is in
 * (the daemon resolves each top level to its repository), else of the hook's cwd; empty when it
 * lies outside all of them.
 */
export function editTargets(file: string, cwd: string | undefined, rootsOf: (f: string) => string[] = gitRoots): { room: string; path: string }[] {
  const base = cwd ?? process.cwd();
  const abs = isAbsolute(file) ? resolve(file) : resolve(base, file);
  const roots = rootsOf(abs);
  return (roots.length ? roots : [base]).filter((root) => {
    const rel = relative(root, abs);
    return !(rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel));
  }).map((root) => ({ room: root, path: abs }));
}

export function agentIdOf(adapter: HookAdapter, input: HookInput): string | undefined {
  const id = adapter.sessionId(input);
  return id ? `${adapter.client}:${id}` : undefined;
}

/** The message that blocks an edit: holder, claim, witness, and what to do instead. */
export function conflictMessage(conflicts: ConflictView[]): string {
  const lines = conflicts.map((c) => {
    const why = c.reason ? ` for "${c.reason}"` : "";
    const where = c.room ? ` [room ${c.room}]` : "";
    return `- ${c.path} is inside ${c.held_by}'s claim ${c.held_path}${where}${why} (both match ${c.witness}; expires in ${c.expires_in_seconds}s)`;
  });
  const holders = [...new Set(conflicts.map((c) => c.held_by))].join(", ");
  return [
    "Airlock: this edit touches a region another agent has claimed.",
    ...lines,
    `Re-scope: leave these files alone and work on a region no one holds (check_paths tells you before you start; claim_paths yours). ` +
      `If you need this region, wait for ${holders} to release it (claim_paths with wait_seconds queues you fairly) or ask them.`,
  ].join("\n");
}

/** The reason that keeps an agent from stopping while a slot it queued for is offered to it. */
export function offerReason(agentId: string, offers: { pool: string; expires?: number | undefined }[]): string {
  const first = offers[0]!;
  const which = offers.length === 1 ? `a slot in pool \`${first.pool}\` is` : `slots in pools ${offers.map((o) => `\`${o.pool}\``).join(", ")} are`;
  const soon = first.expires === undefined ? "briefly" : `for ${first.expires}s more`;
  return (
    `Airlock: your turn has come — ${which} offered to you and held for you only ${soon}. ` +
    `Come back now: call acquire_slot(agent_id="${agentId}", pool="${first.pool}", wake_token=WAKE_TOKEN), where WAKE_TOKEN is the wake_token your queued acquire_slot answer gave you, ` +
    `to claim it, run the heavy work you queued for, then release_slot. If you no longer need it, call release_slot with that wake_token ` +
    `to withdraw, so the next agent gets it.`
  );
}

function more(lines: string[], total: number): string[] {
  return total > lines.length ? [...lines, `  … and ${total - lines.length} more`] : lines;
}

/**
 * One screen: what other agents hold right now (locks, slots and queues, path claims). Claims in
 * `here` (the session's repository room) come first and untagged; others name their room.
 */
export function othersSummary(s: Snapshot, me: string, here?: string): string {
  const out: string[] = [];
  const locks = s.locks.filter((l) => l.agent_id !== me);
  if (locks.length) {
    out.push("Locks:");
    out.push(...more(locks.slice(0, SUMMARY_LINES).map((l) => `  ${l.name} — ${l.agent_id} (${l.held_seconds}s${l.queue_depth ? `, ${l.queue_depth} waiting` : ""})`), locks.length));
  }
  const pools = s.pools.filter((p) => p.holders.length || p.waiters.length);
  if (pools.length) {
    out.push("Slots:");
    for (const p of pools.slice(0, SUMMARY_LINES)) {
      const held = p.holders.map((h) => `${h.agent_id === me ? "you" : h.agent_id}${h.reason ? ` (${h.reason})` : ""}`).join(", ") || "nobody";
      const line = p.waiters.map((w) => `${w.agent_id === me ? "you" : w.agent_id}${w.state === "queued" ? "" : ` [${w.state}]`}`).join(", ");
      out.push(`  ${p.pool} ${p.in_use}/${p.capacity} — held by ${held}${line ? `; in line: ${line}` : ""}`);
    }
    if (pools.length > SUMMARY_LINES) out.push(`  … and ${pools.length - SUMMARY_LINES} more`);
  }
  const rooms = [...s.claims].sort((a, b) => Number(b.room === here) - Number(a.room === here));
  const claims = rooms.flatMap((r) => r.claims.filter((c) => c.agent_id !== me).map((c) => ({ room: r.room, ...c })));
  if (claims.length) {
    out.push("Path claims:");
    out.push(
      ...more(
        claims.slice(0, SUMMARY_LINES).map((c) => `  ${c.agent_id}: ${c.paths.join(" ")}${c.room === here ? "" : ` [room ${c.room}]`}${c.reason ? ` — ${c.reason}` : ""}`),
        claims.length,
      ),
    );
  }
  const edits = (s.worktrees ?? []).filter((w) => w.agent_id !== me && w.touched.length > 0).sort((a, b) => Number(b.room === here) - Number(a.room === here));
  if (edits.length) {
    out.push("Uncommitted edits (report_worktree):");
    out.push(...more(edits.slice(0, SUMMARY_LINES).map((w) => `  ${w.agent_id}${w.branch ? ` on ${w.branch}` : ""}: ${w.touched.slice(0, 5).join(" ")}${w.touched.length > 5 ? ` and ${w.touched.length - 5} more` : ""}${w.room === here ? "" : ` [room ${w.room}]`}`), edits.length));
  }
  const queues = s.queues.filter((q) => q.pending || q.claimed);
  if (queues.length) {
    out.push("Task queues:");
    out.push(...more(queues.slice(0, SUMMARY_LINES).map((q) => `  ${q.queue}: ${q.pending} pending, ${q.claimed} claimed`), queues.length));
  }
  return out.length ? ["What other agents hold right now:", ...out].join("\n") : "Nobody else holds anything right now.";
}

/** What a hook that could not do its check let through, per event. */
const UNCHECKED: Record<HookEvent, string> = {
  "pre-edit": "The edit is allowed, NOT checked against other agents' claims",
  stop: "Stopping is allowed, not checked for a slot offered to this agent or messages asking for an answer",
  "post-tool": "Messages from other agents are not delivered until it answers",
  prompt: "Messages from other agents are not delivered until it answers",
  "session-start": "The session starts without Airlock's coordination context",
};

/** The user-visible line of a fail-open: what went wrong, what was let through, what to run. */
export function failOpenMessage(event: HookEvent, why: string): string {
  return `Airlock hook ${event} could not check (${why.replace(/[<>]/g, "")}). ${UNCHECKED[event]}. Run \`airlock doctor\` to find the cause.`;
}

/** Allows the event, and says so where the user looks and on stderr. */
export function failOpen(adapter: HookAdapter, event: HookEvent, why: string): HookOutput {
  const out = adapter.warnUser(adapter.allow(event), failOpenMessage(event, why));
  return { ...out, stderr: `${out.stderr ?? ""}airlock hook ${adapter.client} ${event}: ${why}; allowing\n` };
}

function parseInput(raw: string | undefined): HookInput | string {
  if (raw === undefined) return "no hook JSON on stdin (not closed in time, or too large)";
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return "stdin is not JSON";
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "stdin is not a JSON object";
  return v as HookInput;
}

/** Runs one hook event: never throws, never blocks on a failure. */
export async function runHook(adapter: HookAdapter, event: HookEvent, raw: string | undefined, deps: HookDeps): Promise<HookOutput> {
  if (!adapter.events.includes(event)) return failOpen(adapter, event, `${adapter.client} has no ${event} hook`);
  const input = parseInput(raw);
  if (typeof input === "string") return failOpen(adapter, event, `malformed input: ${input}`);
  const agentId = agentIdOf(adapter, input);
  try {
    switch (event) {
      case "session-start": {
        if (!agentId) return failOpen(adapter, event, "malformed input: no session id in the hook JSON");
        // The client runs its hooks in the project; the JSON's cwd says so when it has one.
        const cwd = adapter.cwd(input) ?? process.cwd();
        // The top level, as the pre-edit hook sends it: in a sandbox the daemon cannot read, a
        // subdirectory would be a plain room of its own, apart from the hook's.
        const policy = policyText(agentId, checkoutTop(cwd) ?? cwd);
        let summary: string;
        try {
          summary = othersSummary(await deps.status(), agentId, (deps.roomOf ?? roomOfDir)(cwd));
        } catch (err) {
          // The policy and the identity matter more than the summary: give them anyway, and tell
          // the user that the daemon did not answer (so edits are not being checked either).
          const why = `no status (${errorMessage(err)})`;
          const out = adapter.warnUser(
            adapter.sessionContext(policy),
            `Airlock: the daemon did not answer (${errorMessage(err).replace(/[<>]/g, "")}). Until it does, edits are not checked against other agents' claims. Run \`airlock doctor\` to find the cause.`,
          );
          return { ...out, stderr: `${out.stderr ?? ""}airlock hook ${adapter.client} ${event}: ${why}\n` };
        }
        // Messages that came while the session was away (a resume, a compaction) come now.
        const inbox = await inboxText(deps.deliver, agentId, "session").catch(() => "");
        const reported = await reportWorktrees(deps.tool, agentId, "session-start", { cwd });
        return withStderr(adapter.sessionContext([policy, summary, inbox].filter((t) => t !== "").join("\n\n")), reported);
      }
      case "post-tool":
      case "prompt": {
        if (!agentId) return failOpen(adapter, event, "malformed input: no session id in the hook JSON");
        const inbox = await inboxText(deps.deliver, agentId, event === "prompt" ? "prompt" : "tool");
        return inbox ? adapter.context(event, inbox) : adapter.allow(event);
      }
      case "pre-edit": {
        const targets = adapter.editTargets(input);
        if (targets === undefined) return adapter.allow(event);
        if (targets.length === 0) return failOpen(adapter, event, "edit tool without a target path");
        if (!agentId) return failOpen(adapter, event, "malformed input: no session id in the hook JSON");
        const cwd = adapter.cwd(input);
        // One check per checkout: an edit may touch files of two repositories at once, and a
        // file in a submodule is in its parent's checkout too.
        const byRoom = new Map<string, Set<string>>();
        for (const t of targets) {
          for (const e of editTargets(t, cwd, deps.repoRoots ?? gitRoots)) byRoom.set(e.room, (byRoom.get(e.room) ?? new Set()).add(e.path));
        }
        const conflicts: ConflictView[] = [];
        const edited = new Map<string, EditedByView>();
        for (const [room, paths] of byRoom) {
          const r = (await deps.tool("check_paths", { paths: [...paths], room, agent_id: agentId })) as { clear: boolean; conflicts: ConflictView[]; edited_by?: EditedByView[] };
          if (!r.clear) conflicts.push(...(r.conflicts ?? []));
          for (const e of r.edited_by ?? []) edited.set(`${e.agent_id}\u0000${e.path}`, e);
        }
        if (conflicts.length > 0) return adapter.denyEdit(conflictMessage(conflicts));
        // Another agent's uncommitted edit of the file: said to the model, refused only under strict.
        const { policy, warning } = editPolicy();
        if (edited.size > 0 && policy === "strict") return withStderr(adapter.denyEdit(editedByMessage(agentId, [...edited.values()], true)), warning);
        const note = edited.size > 0 ? editedByMessage(agentId, [...edited.values()], false) : undefined;
        const out = note === undefined ? adapter.allow(event) : adapter.noteEdit ? adapter.noteEdit(note) : adapter.warnUser(adapter.allow(event), note);
        const files = [...new Set([...byRoom.values()].flatMap((p) => [...p]))];
        return withStderr(out, `${note ? (warning ?? "") : ""}${(await reportWorktrees(deps.tool, agentId, "edit", { cwd, files })) ?? ""}`);
      }
      case "stop": {
        if (!agentId) return failOpen(adapter, event, "malformed input: no session id in the hook JSON");
        // The end of a turn: what the edits left pending is reported (best effort, whatever follows).
        const reported = await reportWorktrees(deps.tool, agentId, "stop", {});
        if (adapter.stopAlreadyContinued(input)) return withStderr(adapter.allow(event), reported);
        const pools = (await deps.tool("list_pools", {})) as PoolView[];
        const offers = pools.flatMap((p) =>
          p.waiters.filter((w) => w.agent_id === agentId && w.state === "offered").map((w) => ({ pool: p.pool, expires: w.offer_expires_in_seconds })),
        );
        const reason = await stopWithInbox(deps.deliver, agentId, offers.length ? offerReason(agentId, offers) : undefined);
        return withStderr(reason === undefined ? adapter.allow(event) : adapter.blockStop(reason), reported);
      }
    }
  } catch (err) {
    return failOpen(adapter, event, errorMessage(err));
  }
}

// Small readers for the adapters: hook JSON is untrusted, so every field is checked.
export const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
export const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
export const json = (v: unknown): string => `${JSON.stringify(v)}\n`;

/** Adds lines for the client's log to an answer (none: the answer as it is). */
function withStderr(out: HookOutput, line: string | undefined): HookOutput {
  return line ? { ...out, stderr: `${out.stderr ?? ""}${line.endsWith("\n") ? line : `${line}\n`}` } : out;
}

/** Adds a top-level field to an answer's JSON (an empty answer becomes an object). */
export function withJsonField(out: HookOutput, key: string, value: unknown): HookOutput {
  let body: Record<string, unknown> = {};
  try {
    body = out.stdout ? (obj(JSON.parse(out.stdout)) ?? {}) : {};
  } catch {
    body = {};
  }
  return { ...out, stdout: json({ ...body, [key]: value }) };
}

/**
 * The answers of Claude Code's hook contract, which Codex adopted field for field: context and
 * denials under hookSpecificOutput, a blocked stop as {decision:"block", reason}, and
 * stop_hook_active as the loop guard.
 */
export const CLAUDE_STYLE_ANSWERS: Pick<HookAdapter, "stopAlreadyContinued" | "allow" | "sessionContext" | "denyEdit" | "blockStop" | "context" | "warnUser"> = {
  stopAlreadyContinued: (input) => input.stop_hook_active === true,
  allow: () => ({ code: 0 }),
  sessionContext: (text) => ({ code: 0, stdout: json({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: text } }) }),
  denyEdit: (message) => ({
    code: 0,
    stdout: json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: message } }),
  }),
  blockStop: (reason) => ({ code: 0, stdout: json({ decision: "block", reason }) }),
  // PostToolUse and UserPromptSubmit: additionalContext is added to what the model reads next
  // (Claude Code's hooks reference; Codex 0.171.0's post-tool-use and user-prompt-submit schemas).
  context: (event, text) => ({
    code: 0,
    stdout: json({ hookSpecificOutput: { hookEventName: event === "prompt" ? "UserPromptSubmit" : "PostToolUse", additionalContext: text } }),
  }),
  // `systemMessage`: "a warning message shown to the user" (Claude Code), and the same field in
  // every Codex 0.171.0 hook output schema (session-start, pre-tool-use, stop, post-compact).
  warnUser: (out, message) => withJsonField(out, "systemMessage", message),
};
