// A room is a repository (SPEC §6): the path tools turn the `room` they are given, and the
// absolute paths, into the repository's room and repository-relative paths before the domain
// sees them, so the domain keeps comparing plain strings.
//
// - A name (`default`, `seed`, anything not starting with `/`) is a room as it stands.
// - An absolute directory the daemon can read is resolved to its repository: the normalized
//   URL of its `origin` remote, else its main worktree's absolute path; paths are relative to
//   the top level of the worktree the directory is in, and an absolute path must lie inside it.
//   A directory outside any repository is a room of its own, named by its real path.
// - An absolute directory the daemon cannot read (a sandbox's, say) stays a plain name, and the
//   domain makes absolute paths inside it relative to it, as before.
// - With no room, the first absolute path names the repository; with none, the room is `default`.
// Besides its room, a directory has *alias* rooms, where claims on the same relative paths may
// still live: a repository's older names (its main worktree's path and its checkout's top level,
// which were its room before it had an `origin`, or were typed by hand), and `default` (where a
// claim made without room lands, and where every hook looked before rooms were repositories).
// check_paths looks in all of them at once (one call per edit for the hooks); see docs/rooms.md.
// A hook asks on every edit, so a directory's answer is kept for a couple of seconds.
import { realpathSync, statSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import { normalizePattern } from "../../domain/glob/index.ts";
import { DEFAULT_ROOM, roomIsCaseInsensitive } from "../../domain/paths.ts";
import { AirlockError } from "../../errors.ts";
import { readDir, repositoryRoom } from "../../machine/repo.ts";

/** Long enough that a burst of edits reads git's files once; short enough that a new `origin` shows at once. */
export const ROOM_CACHE_MS = 2000;
/** Directories remembered at once; past it the cache starts over (a daemon sees a few checkouts). */
const ROOM_CACHE_SIZE = 1024;
const GLOB_CHARS = /[*?[\]{}\\]/;

export interface ResolvedDir {
  /** The room: an origin URL key, a main worktree's path, or the directory itself. */
  room: string;
  /** The top level paths are relative to: the checkout's, or the directory itself outside any. */
  top: string;
  /** The same top level as the caller spelled it (before symlinks were resolved), when it differs. */
  alias?: string;
  /** False for a directory outside any repository (a room of its own). */
  repository: boolean;
  /** The repository's other room names (its main worktree's and checkout's real paths), less `room`. */
  aliases: string[];
}

export interface RoomAndPaths {
  room: string;
  paths: string[];
  /**
   * Other rooms the same paths may be claimed in, when the room came from a directory: the
   * repository's aliases, then `default`. Empty for a named room, and for no room with relative paths.
   */
  also: string[];
}

export class RoomResolver {
  private readonly cache = new Map<string, { at: number; value: ResolvedDir | undefined }>();

  constructor(private readonly ttlMs = ROOM_CACHE_MS) {}

  /** The room of an absolute directory, or undefined when the daemon cannot read it. */
  dir(dir: string): ResolvedDir | undefined {
    const now = Date.now();
    const hit = this.cache.get(dir);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = resolveDir(dir);
    if (this.cache.size >= ROOM_CACHE_SIZE) this.cache.clear();
    this.cache.set(dir, { at: now, value });
    return value;
  }

  /** The room and repository-relative paths for a path tool's `room` and `paths` arguments. */
  resolve(room: string | undefined, paths: readonly string[] = []): RoomAndPaths {
    if (room !== undefined && !room.startsWith("/")) return { room, paths: [...paths], also: [] };
    if (room !== undefined) {
      const r = this.dir(room);
      if (r) return { room: r.room, paths: paths.map((p) => inside(p, r)), also: [...r.aliases, DEFAULT_ROOM] };
      // Unreadable (a sandbox's): a plain name, its absolute paths made relative to it, as the domain would.
      return { room, paths: paths.map((p) => (p.startsWith("/") ? normalizePattern(p, { room }) : p)), also: [DEFAULT_ROOM] };
    }
    const first = paths.find((p) => p.startsWith("/"));
    if (first === undefined) return { room: DEFAULT_ROOM, paths: [...paths], also: [] };
    const r = this.dir(existingDir(first));
    if (!r?.repository) {
      throw new AirlockError(
        "invalid_argument",
        `absolute path ${JSON.stringify(first)} is in no repository the daemon can read; pass room (your working directory, absolute) or give repository-relative paths`,
      );
    }
    return { room: r.room, paths: paths.map((p) => inside(p, r)), also: [...r.aliases, DEFAULT_ROOM] };
  }
}

/** The one resolver the daemon's path tools share. */
export const rooms = new RoomResolver();

function resolveDir(dir: string): ResolvedDir | undefined {
  const d = readDir(dir);
  if (!d) return undefined;
  const { real, co } = d;
  const given = resolve(dir);
  const top = co?.top ?? real;
  const room = co ? repositoryRoom(co) : real;
  const aliases = co ? [...new Set([realOrSelf(co.main), top])].filter((a) => a !== room) : [];
  // How the caller spells the top level: `given` less the directory's offset below it.
  const offset = relative(top, real);
  const suffix = offset === "" ? "" : `${sep}${offset}`;
  const alias = given.endsWith(suffix) ? given.slice(0, given.length - suffix.length) || "/" : undefined;
  return { room, top, repository: co !== undefined, aliases, ...(alias !== undefined && alias !== top ? { alias } : {}) };
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The nearest existing directory at or above an absolute path's literal part. */
function existingDir(p: string): string {
  const literal: string[] = [];
  for (const s of p.split("/")) {
    if (GLOB_CHARS.test(s) || s === "..") break;
    literal.push(s);
  }
  let d = literal.join("/") || "/";
  for (;;) {
    try {
      if (statSync(d).isDirectory()) return d;
    } catch {
      // not there (yet): its parent
    }
    const up = dirname(d);
    if (up === d) return d;
    d = up;
  }
}

/** An absolute path made relative to the checkout's top level; a relative one as it is. */
function inside(p: string, r: ResolvedDir): string {
  if (!p.startsWith("/")) return p;
  const segments = p.split("/").filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) return p; // the domain refuses it, with its own words
  const fold = roomIsCaseInsensitive(r.top) ? (s: string) => s.toLowerCase() : (s: string) => s;
  for (const base of [r.top, r.alias]) {
    if (base === undefined) continue;
    const baseSegments = base.split("/").filter((s) => s !== "");
    if (!baseSegments.every((s, i) => segments[i] !== undefined && fold(segments[i]!) === fold(s))) continue;
    const rest = segments.slice(baseSegments.length);
    if (rest.length === 0) {
      throw new AirlockError("invalid_argument", `path ${JSON.stringify(p)} is the checkout's top level itself (room ${JSON.stringify(r.room)}); claim "**" for the whole tree`);
    }
    return rest.join("/");
  }
  throw new AirlockError(
    "invalid_argument",
    `absolute path ${JSON.stringify(p)} is outside the checkout ${r.top} (room ${JSON.stringify(r.room)}); give a path inside it, or a repository-relative one`,
  );
}
