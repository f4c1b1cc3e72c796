// Which repository a directory belongs to, read from git's own files (no `git` process: a hook
// asks on every edit, and the daemon may run where git is not installed). Facts only: the
// checkout's top level, the repository's common git directory, its main worktree, and the URL
// of its `origin` remote, normalized so every spelling of one remote is one string. What a room
// is made of these facts is decided by the caller (src/mcp/tools/rooms.ts).
//
// Read as git does, minus what a room does not need: `.git` found by walking up (a directory, or
// a `gitdir:` file for linked worktrees and submodules, whose `commondir` leads to the shared
// directory), and the common directory's `config` parsed for `[remote "origin"] url`. Not read:
// `include`/`includeIf` files, `url.<base>.insteadOf` rewrites, the GIT_DIR / GIT_WORK_TREE
// environment, and the user's global config (an origin is always a repository setting).
import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";

export interface Checkout {
  /** The top level of the worktree the directory is in (the directory holding `.git`). */
  top: string;
  /** The repository's common git directory (shared by all its worktrees). */
  commonDir: string;
  /** The main worktree's absolute path (for a bare repository, the repository itself). */
  main: string;
  /** The `origin` remote's normalized URL (see normalizeRemoteUrl), when there is one. */
  origin?: string;
}

/** The nearest directory at or above `dir` that holds a `.git` entry, or undefined. */
export function checkoutTop(dir: string): string | undefined {
  let d = resolve(dir);
  for (;;) {
    if (exists(join(d, ".git"))) return d;
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/**
 * Every checkout `dir` is in, innermost first: a submodule or a repository nested in another's
 * tree is inside both (one walk up, to the root).
 */
export function checkoutTops(dir: string): string[] {
  const out: string[] = [];
  let d = resolve(dir);
  for (;;) {
    if (exists(join(d, ".git"))) out.push(d);
    const up = dirname(d);
    if (up === d) return out;
    d = up;
  }
}

/**
 * The checkout `dir` is in: undefined outside any repository. `dir` should be a real path (the
 * caller resolves symlinks); a `.git` that cannot be read as git's leaves the directory outside.
 */
export function readCheckout(dir: string): Checkout | undefined {
  const top = checkoutTop(dir);
  if (top === undefined) return undefined;
  const dotGit = join(top, ".git");
  let gitDir = dotGit;
  if (!isDirectory(dotGit)) {
    // A linked worktree or a submodule: `.git` is a file naming the real git directory.
    const line = readText(dotGit)?.match(/^gitdir:\s*(.+?)\s*$/m)?.[1];
    if (!line) return undefined;
    gitDir = resolve(top, line);
  }
  // A linked worktree's own git directory names the shared one; a main worktree's is shared.
  const common = readText(join(gitDir, "commondir"))?.trim();
  const commonDir = common ? resolve(gitDir, common) : gitDir;
  const config = parseGitConfig(readText(join(commonDir, "config")) ?? "");
  const url = config.get("remote.origin.url")?.[0];
  const origin = url ? normalizeRemoteUrl(url, top) : undefined;
  const worktree = config.get("core.worktree")?.[0];
  let main: string;
  if (worktree) main = resolve(commonDir, worktree); // a submodule, or --separate-git-dir with core.worktree
  else if (basename(commonDir) === ".git") main = dirname(commonDir);
  else if (gitDir === commonDir) main = top; // --separate-git-dir without core.worktree
  else main = commonDir; // a linked worktree of a bare repository
  return { top, commonDir, main, ...(origin ? { origin } : {}) };
}

/**
 * The room of the repository a checkout belongs to: its origin's normalized URL, shared by every
 * clone on every machine, else its main worktree's real path, shared by its linked worktrees.
 */
export function repositoryRoom(co: Checkout): string {
  if (co.origin) return co.origin;
  try {
    return realpathSync(co.main);
  } catch {
    return co.main;
  }
}

/** A readable directory: its real path, and the checkout it is in (if any); undefined when it cannot be read here. */
export function readDir(dir: string): { real: string; co: Checkout | undefined } | undefined {
  let real: string;
  try {
    if (!statSync(dir).isDirectory()) return undefined;
    real = realpathSync(dir);
  } catch {
    return undefined;
  }
  return { real, co: readCheckout(real) };
}

/**
 * The room of a directory as the daemon names it: its repository's room, the directory's own
 * real path outside any repository, or undefined when it cannot be read here.
 */
export function roomOfDir(dir: string): string | undefined {
  const d = readDir(dir);
  if (!d) return undefined;
  return d.co ? repositoryRoom(d.co) : d.real;
}

/**
 * One string per remote, whatever its spelling: `https://github.com/org/repo.git`,
 * `git@github.com:org/repo` and `ssh://git@github.com/org/repo.git` are all
 * `github.com/org/repo`. The scheme, the user and the port go (the same forge serves a
 * repository over ssh on one port and https on another), the host is lower-cased (DNS names are
 * case-insensitive; repository paths are not, so their case stays), and a trailing `.git` and
 * `/` are dropped. A local path (`/srv/repo`, `file:///srv/repo`, `../repo`, resolved against
 * `base`) stays an absolute path, with symlinks resolved when it exists and a trailing `/.git`
 * dropped; a directory really named `repo.git` keeps its name, since that is the directory.
 */
export function normalizeRemoteUrl(url: string, base = "/"): string {
  const u = url.trim();
  const scheme = u.match(/^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/);
  if (scheme) {
    const kind = scheme[1]!.toLowerCase();
    const rest = scheme[2]!;
    if (kind === "file") return localPath(decodeURIComponent(rest.replace(/^[^/]*/, "")) || "/", base);
    const slash = rest.indexOf("/");
    const authority = slash < 0 ? rest : rest.slice(0, slash);
    return remoteKey(hostOf(authority), slash < 0 ? "" : rest.slice(slash));
  }
  // git's scp-like syntax: [user@]host:path, with no slash before the colon.
  const scp = u.match(/^([^/:]+):(.*)$/);
  if (scp && !isAbsolute(u)) return remoteKey(hostOf(scp[1]!), scp[2]!);
  return localPath(u, base);
}

function hostOf(authority: string): string {
  const host = authority.slice(authority.lastIndexOf("@") + 1);
  const bare = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d*$/, "");
  return bare.toLowerCase();
}

function remoteKey(host: string, path: string): string {
  const segments = path.split("/").filter((s) => s !== "" && s !== ".");
  let key = segments.join("/").replace(/\.git$/, "");
  if (key.endsWith("/")) key = key.slice(0, -1);
  return key === "" ? host : `${host}/${key}`;
}

function localPath(p: string, base: string): string {
  let abs = resolve(base, p);
  if (basename(abs) === ".git") abs = dirname(abs);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

/**
 * git's config syntax, enough for remotes: `[section]`, `[section "sub\"sect"]` (subsection
 * case-sensitive), the old `[section.sub]` (lower-cased), `key = value` with quotes, escapes,
 * `#`/`;` comments and `\` line continuations, and a bare `key` (true). Keys are
 * `section.subsection.name`, section and name lower-cased; each maps to its values in order.
 */
export function parseGitConfig(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let section = "";
  let i = 0;
  const n = text.length;
  const add = (name: string, value: string) => {
    const key = `${section}.${name.toLowerCase()}`;
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  };
  const skipLine = () => {
    while (i < n && text[i] !== "\n") i++;
  };
  while (i < n) {
    const ch = text[i]!;
    if (ch === "\n" || ch === " " || ch === "\t" || ch === "\r") {
      i++;
      continue;
    }
    if (ch === "#" || ch === ";") {
      skipLine();
      continue;
    }
    if (ch === "[") {
      const close = headerEnd(text, i);
      if (close < 0) return out; // a broken header: git refuses the file; we stop reading it
      section = parseHeader(text.slice(i + 1, close));
      i = close + 1;
      continue;
    }
    const name = text.slice(i).match(/^[A-Za-z][A-Za-z0-9-]*/)?.[0];
    if (!name) {
      skipLine();
      continue;
    }
    i += name.length;
    while (i < n && (text[i] === " " || text[i] === "\t")) i++;
    if (text[i] !== "=") {
      add(name, "true");
      continue;
    }
    i++;
    const [value, next] = parseValue(text, i);
    add(name, value);
    i = next;
  }
  return out;
}

/** The index of the `]` closing the header at `start`, past any quoted subsection. */
function headerEnd(text: string, start: number): number {
  let quoted = false;
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") return -1;
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (c === "]" && !quoted) return i;
  }
  return -1;
}

function parseHeader(body: string): string {
  const q = body.indexOf('"');
  if (q < 0) {
    // [section] or the deprecated [section.subsection], both lower-cased.
    return body.trim().toLowerCase();
  }
  const name = body.slice(0, q).trim().toLowerCase();
  let sub = "";
  for (let i = q + 1; i < body.length && body[i] !== '"'; i++) {
    if (body[i] === "\\" && i + 1 < body.length) i++;
    sub += body[i];
  }
  return `${name}.${sub}`;
}

/** A value from `start` to its line's end: returns it and the index after it. */
function parseValue(text: string, start: number): [string, number] {
  let out = "";
  let pending = ""; // unquoted whitespace, kept only if something follows it
  let quoted = false;
  let i = start;
  while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\n") break;
    if (c === "\r" && text[i + 1] === "\n") continue;
    if (!quoted && (c === "#" || c === ";")) {
      while (i < text.length && text[i] !== "\n") i++;
      break;
    }
    if (c === "\\") {
      const e = text[i + 1];
      i++;
      if (e === "\n") continue; // a continuation line
      if (e === "\r" && text[i + 1] === "\n") {
        i++;
        continue;
      }
      out += pending + (e === "n" ? "\n" : e === "t" ? "\t" : e === "b" ? "\b" : (e ?? ""));
      pending = "";
      continue;
    }
    if (c === '"') {
      out += pending;
      pending = "";
      quoted = !quoted;
      continue;
    }
    if (!quoted && (c === " " || c === "\t")) {
      pending += c;
      continue;
    }
    out += pending + c;
    pending = "";
  }
  return [out, i];
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function readText(p: string): string | undefined {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
}
