// What a client is to `airlock setup`: where its configuration lives, and the parts setup adds to
// it (MCP server entry, policy text, hook entries). Each part is a pure edit (bytes in, bytes
// out) that can be taken back exactly; `applyParts` does the I/O (lock, backup, atomic write,
// dry-run diff) the same way for every client.
import { existsSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { applyEdits, findNodeAtLocation, modify, parse, parseTree, type FormattingOptions, type JSONPath, type ParseError } from "jsonc-parser";
import { discoveredUrl, projectUrl } from "../config/discovery.ts";
import { airlockHome, tokenPath } from "../config/dirs.ts";
import { env } from "../config/env.ts";
import { clientToken } from "../config/token.ts";
import { AirlockError } from "../errors.ts";
import { airlockArgv, airlockCommand } from "./command.ts";
import { backupOnce, readOrNull, readState, unifiedDiff, withFileLock, writeAtomic, writeState, type CreatedRecord } from "./files.ts";
import { POLICY_MARKER, policyText } from "./policy.ts";

/** The name of our MCP server entry in every client: v2's configs use it too. */
export const SERVER_KEY = "airlock";
export const HOOK_EVENTS = ["session-start", "pre-edit", "post-tool", "prompt", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export interface SetupContext {
  /** The user's home (HOME); every user-scope path hangs off it. */
  home: string;
  /** `--project DIR`, absolute; undefined for the user scope. */
  project?: string;
  xdgConfigHome: string;
  /** CLAUDE_CONFIG_DIR when set: Claude Code then keeps its user files there, .claude.json too. */
  claudeConfigDir?: string;
  /** CODEX_HOME when set (else ~/.codex): Codex's user config, hooks and AGENTS.md. */
  codexHome?: string;
  /** COPILOT_HOME when set (else ~/.copilot): Copilot CLI's mcp-config.json, hooks and instructions. */
  copilotHome?: string;
  /** http://HOST:PORT/: this user's daemon (user scope), the default port (project scope). */
  url: string;
  tokenPath: string;
  /** The token as a client would send it now (AIRLOCK_TOKEN or the token file), if any. */
  token?: string;
  /** How a hook invokes airlock (src/clients/command.ts): `airlock`, a stable path, or this checkout. */
  airlock: string;
  /** The same as a program and its arguments, for a stdio server entry (`airlock mcp`); default: airlockArgv(). */
  airlockArgv?: string[];
  airlockHome: string;
}

export interface Part {
  /** "MCP server", "policy", "hooks": shown in the summary. */
  what: string;
  path: string;
  /** The file will hold a literal token: written 0600. */
  secret?: boolean;
  /** The file is a script the client runs (Cline's hook files): written 0755. */
  executable?: boolean;
  install(text: string | null, rec: CreatedRecord): string;
  remove(text: string, rec: CreatedRecord): string;
  isInstalled(text: string | null): boolean;
  /** What is left counts as "nothing": a file setup created is then deleted on --remove. */
  isEmpty(text: string): boolean;
}

export interface Client {
  id: string;
  name: string;
  /** The documentation each written file follows (also listed in docs/clients.md). */
  docs: string[];
  /** Where the client was found on this machine, or undefined. */
  detect(ctx: SetupContext): string | undefined;
  parts(ctx: SetupContext): Part[];
  /** The hook events setup writes for this client (none: it has no hooks); doctor checks each is there. */
  hookEvents?: readonly HookEvent[];
  /** Things setup cannot write for this client and scope (printed after the changes). */
  notes?(ctx: SetupContext): string[];
  /**
   * The MCP entry as written (its URL, Authorization value, and the permission rule where the
   * client has one), for doctor; undefined when absent.
   */
  mcpEntry?(ctx: SetupContext): { url?: string; authorization?: string; permission?: { present: boolean; what: string } } | undefined;
}

export function setupContext(o: { project?: string; home?: string } = {}): SetupContext {
  const home = o.home ?? env.userHome ?? homedir();
  return {
    home,
    project: o.project === undefined ? undefined : resolve(o.project),
    xdgConfigHome: env.xdgConfigHome ?? join(home, ".config"),
    ...(env.claudeConfigDir ? { claudeConfigDir: resolve(env.claudeConfigDir) } : {}),
    ...(env.codexHome ? { codexHome: resolve(env.codexHome) } : {}),
    ...(env.copilotHome ? { copilotHome: resolve(env.copilotHome) } : {}),
    // A project file is committed: the default place every teammate's daemon has, not this user's.
    url: o.project === undefined ? discoveredUrl() : projectUrl(),
    tokenPath: tokenPath(),
    token: clientToken(),
    airlock: airlockCommand({ project: o.project !== undefined }),
    airlockArgv: airlockArgv({ project: o.project !== undefined }),
    airlockHome: airlockHome(),
  };
}

export function hookCommand(ctx: SetupContext, client: string, event: HookEvent): string {
  return `${ctx.airlock} hook ${client} ${event}`;
}

/**
 * Is this one of our hook commands (any airlock binary path, or a checkout's src/main.ts run by
 * bun; this client; a known event)?
 */
export function isOurHookCommand(command: unknown, client: string): boolean {
  if (typeof command !== "string") return false;
  const re = new RegExp(`(^|[/\\s'"])(airlock|main\\.ts)'? hook ${client.replace(/[-]/g, "\\-")} (${HOOK_EVENTS.join("|")})$`);
  return re.test(command.trim());
}

// --- JSON / JSONC edits (jsonc-parser: comments and formatting kept) --------------------------

function formatting(text: string): FormattingOptions {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? "  ";
  return { insertSpaces: !indent.startsWith("\t"), tabSize: indent.startsWith("\t") ? 1 : indent.length, eol: text.includes("\r\n") ? "\r\n" : "\n" };
}

export function parseJsonc(text: string | null, path: string): unknown {
  if (text === null || text.trim() === "") return {};
  const errors: ParseError[] = [];
  const v = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new AirlockError("config", `${path} is not a JSON object (parse error at offset ${errors[0]?.offset ?? 0}); fix it or move it away, then run setup again`);
  }
  return v;
}

export function getAt(value: unknown, path: JSONPath): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

function edit(text: string, path: JSONPath, value: unknown, opts: { insert?: boolean } = {}): string {
  const edits = modify(text, path, value, { formattingOptions: formatting(text), isArrayInsertion: opts.insert });
  return applyEdits(text, edits);
}

/**
 * Adds a member after the last one of a non-empty object or array, touching no other byte:
 * jsonc-parser's own insertion re-formats the whole line of the previous member, which would
 * rewrite a user's one-line entry. Falls back to jsonc-parser for an empty or missing container.
 */
function appendMember(text: string, container: JSONPath, key: string | undefined, value: unknown): string | undefined {
  const node = findNodeAtLocation(parseTree(text)!, container);
  const last = node?.children?.at(-1);
  if (!node || !last) return undefined;
  const lineStart = text.lastIndexOf("\n", last.offset) + 1;
  const lead = text.slice(lineStart, last.offset);
  const f = formatting(text);
  const unit = f.insertSpaces ? " ".repeat(f.tabSize ?? 2) : "\t";
  const indent = /^[ \t]*$/.test(lead) ? lead : unit;
  const end = last.offset + last.length;
  const multiline = text.slice(node.offset, end).includes("\n");
  // Into a one-line container, a one-line member: `[{ "a": 1 }, { "b": 2 }]`.
  const body = multiline ? JSON.stringify(value, null, unit).replaceAll("\n", f.eol + indent) : JSON.stringify(value, null, 1).replace(/\n\s*/g, " ");
  const member = key === undefined ? body : `${JSON.stringify(key)}: ${body}`;
  const sep = multiline ? `,${f.eol}${indent}` : ", ";
  return text.slice(0, end) + sep + member + text.slice(end);
}

/** Removes a member so that an appendMember (or the user's own layout) comes back byte for byte. */
function removeMember(text: string, path: JSONPath): string {
  const root = parseTree(text);
  const target = root && findNodeAtLocation(root, path);
  if (!target) return text;
  const member = target.parent?.type === "property" ? target.parent : target;
  const container = member.parent!;
  const siblings = container.children ?? [];
  const i = siblings.indexOf(member);
  const end = member.offset + member.length;
  if (i > 0) {
    const prev = siblings[i - 1]!;
    return text.slice(0, prev.offset + prev.length) + text.slice(end);
  }
  if (siblings.length > 1) return text.slice(0, member.offset) + text.slice(siblings[1]!.offset);
  // The only member: the container goes back to empty.
  return text.slice(0, container.offset + 1) + text.slice(container.offset + container.length - 1);
}

/** The text a new JSON file starts from. */
const EMPTY_JSON = "{}\n";

/**
 * Sets `path` to `value`, noting in `rec` the outermost container it had to create (so --remove
 * can drop that container again once it holds nothing of the user's).
 */
export function jsonSet(text: string | null, file: string, path: JSONPath, value: unknown, rec: CreatedRecord): string {
  const t = text === null || text.trim() === "" ? EMPTY_JSON : text;
  const doc = parseJsonc(t, file);
  notCreated(doc, path, rec);
  const current = getAt(doc, path);
  if (JSON.stringify(current) === JSON.stringify(value)) return t;
  if (current === undefined) {
    const appended = appendMember(t, path.slice(0, -1), String(path.at(-1)), value);
    if (appended !== undefined) return appended;
  }
  return edit(t, path, value);
}

/** Appends `value` to the array at `path` (created if missing). */
export function jsonAppend(text: string | null, file: string, path: JSONPath, value: unknown, rec: CreatedRecord): string {
  const t = text === null || text.trim() === "" ? EMPTY_JSON : text;
  const doc = parseJsonc(t, file);
  const arr = getAt(doc, path);
  if (!Array.isArray(arr)) {
    notCreated(doc, [...path, 0], rec);
    return jsonSet(t, file, path, [value], rec);
  }
  return appendMember(t, path, undefined, value) ?? edit(t, [...path, arr.length], value, { insert: true });
}

function notCreated(doc: unknown, path: JSONPath, rec: CreatedRecord): void {
  for (let i = 1; i < path.length; i++) {
    const prefix = path.slice(0, i);
    if (getAt(doc, prefix) === undefined) {
      rec.paths ??= [];
      if (!rec.paths.some((p) => JSON.stringify(p) === JSON.stringify(prefix))) rec.paths.push(prefix);
      return;
    }
  }
}

export function jsonDelete(text: string, path: JSONPath): string {
  return removeMember(text, path);
}

/** Drops the containers setup created, if nothing but emptiness is left in them. */
export function pruneCreated(text: string, file: string, rec: CreatedRecord): string {
  let t = text;
  const paths = [...(rec.paths ?? [])].sort((a, b) => b.length - a.length);
  for (const p of paths) {
    const v = getAt(parseJsonc(t, file), p);
    if (v !== undefined && deepEmpty(v)) t = jsonDelete(t, p);
  }
  rec.paths = [];
  return t;
}

export function deepEmpty(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(deepEmpty);
  if (v && typeof v === "object") return Object.values(v).every(deepEmpty);
  return false;
}

/** The MCP server entry as a part: `containerPath` is e.g. ["mcpServers"]. */
export function jsonServerPart(o: { what?: string; path: string; container: JSONPath; entry: unknown; secret?: boolean }): Part {
  const key = [...o.container, SERVER_KEY];
  return {
    what: o.what ?? "MCP server",
    path: o.path,
    secret: o.secret,
    install: (text, rec) => jsonSet(text, o.path, key, o.entry, rec),
    remove: (text, rec) => {
      const doc = parseJsonc(text, o.path);
      const t = getAt(doc, key) === undefined ? text : jsonDelete(text, key);
      return pruneCreated(t, o.path, rec);
    },
    isInstalled: (text) => text !== null && getAt(parseJsonc(text, o.path), key) !== undefined,
    isEmpty: (text) => text.trim() === "" || deepEmpty(parseJsonc(text, o.path)),
  };
}

// --- Text blocks between markers -------------------------------------------------------------

export const POLICY_START = `<!-- ${POLICY_MARKER}:start -->`;
export const POLICY_END = `<!-- ${POLICY_MARKER}:end -->`;

function findBlock(text: string): { start: number; end: number } | undefined {
  const start = text.indexOf(POLICY_START);
  if (start < 0) return undefined;
  const endMarker = text.indexOf(POLICY_END, start);
  if (endMarker < 0) return undefined;
  let end = endMarker + POLICY_END.length;
  if (text.startsWith("\r\n", end)) end += 2;
  else if (text[end] === "\n") end += 1;
  return { start, end };
}

export function policyBlock(body = policyText()): string {
  return `${POLICY_START}\n${body}\n${POLICY_END}\n`;
}

/** The policy between markers in a Markdown-like file; `header` is what a new file starts with. */
export function textBlockPart(o: { what?: string; path: string; block: string; header?: string }): Part {
  return {
    what: o.what ?? "policy",
    path: o.path,
    install(text, rec) {
      const t = text ?? "";
      const found = findBlock(t);
      if (found) return t.slice(0, found.start) + o.block + t.slice(found.end);
      if (text === null && o.header) {
        rec.prefix = o.header;
        return o.header + o.block;
      }
      const prefix = t === "" ? "" : t.endsWith("\n\n") ? "" : t.endsWith("\n") ? "\n" : "\n\n";
      rec.prefix = prefix;
      return t + prefix + o.block;
    },
    remove(text, rec) {
      const found = findBlock(text);
      if (!found) return text;
      let before = text.slice(0, found.start);
      const prefix = rec.prefix ?? "";
      if (prefix !== "" && before.endsWith(prefix)) before = before.slice(0, before.length - prefix.length);
      rec.prefix = undefined;
      return before + text.slice(found.end);
    },
    isInstalled: (text) => text !== null && findBlock(text) !== undefined,
    isEmpty: (text) => text.trim() === "",
  };
}

// --- Applying parts --------------------------------------------------------------------------

export interface Change {
  path: string;
  before: string | null;
  after: string | null;
  what: string[];
}

export interface ApplyOptions {
  remove?: boolean;
  dryRun?: boolean;
  airlockHome: string;
}

/**
 * Installs (or removes) every part, file by file, each under its lock: read, edit, back up, write.
 * With dryRun nothing is written; the returned changes say what would be.
 */
export async function applyParts(parts: Part[], o: ApplyOptions): Promise<Change[]> {
  const byPath = new Map<string, Part[]>();
  for (const p of parts) byPath.set(p.path, [...(byPath.get(p.path) ?? []), p]);
  const state = readState(o.airlockHome);
  const changes: Change[] = [];
  for (const [path, ps] of byPath) {
    const run = (): Change | undefined => {
      const before = readOrNull(path);
      const rec: CreatedRecord = structuredClone(state[path] ?? {});
      let after: string | null = before;
      if (!o.remove) {
        if (before === null) rec.file = true;
        for (const p of ps) after = p.install(after, rec);
      } else if (before !== null) {
        for (const p of [...ps].reverse()) after = p.remove(after as string, rec);
        if (rec.file && after !== null && ps.every((p) => p.isEmpty(after as string))) after = null;
      }
      // After --remove nothing of ours is left in the file, so there is nothing to remember.
      if (o.remove) delete state[path];
      else state[path] = rec;
      if (after === before) return undefined;
      const change = { path, before, after, what: ps.map((p) => p.what) };
      if (o.dryRun) return change;
      // Back up the user's file, never one setup itself created.
      if (before !== null && !rec.file && !state[path]?.file) backupOnce(path);
      if (after === null) rmSync(path, { force: true });
      else writeAtomic(path, after, ps.some((p) => p.secret), ps.some((p) => p.executable));
      return change;
    };
    const change = o.dryRun ? run() : await withFileLock(path, run);
    if (change) changes.push(change);
  }
  if (!o.dryRun) writeState(o.airlockHome, state);
  return changes;
}

export function diffOf(changes: Change[]): string {
  return changes.map((c) => unifiedDiff(c.path, c.before, c.after)).join("");
}

/** Which parts of a client are in place now (for bare `airlock setup`). */
export function installedParts(parts: Part[]): string[] {
  // Each once: a client may have several files of one kind (Cline's hook scripts).
  return [...new Set(parts.filter((p) => p.isInstalled(readOrNull(p.path))).map((p) => p.what))];
}

export function exists(path: string): boolean {
  return existsSync(path);
}
