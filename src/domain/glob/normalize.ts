// Repository-relative normal form for claimed paths and patterns.
//
// Two agents must not be able to dodge each other by spelling one path two ways (`./src//a/`
// versus `src/a`), and a `..` could step outside the region a claim names, so every pattern is
// put in one form before it is stored or compared. This works on the text only: glob characters
// and backslashes are left as they are (a `\` is an escape for the glob parser, never a separator
// here), and brace bodies are split like anything else, which is harmless because an alternative
// is read as a sequence of segments too.
import { patternError, quotePattern } from "./limits.ts";

export interface NormalizeOptions {
  /** The room's name. When it is an absolute directory, absolute paths inside it are accepted and
   *  made relative to it. */
  room?: string;
}

/**
 * Strips a leading `./`, collapses `//`, drops a trailing `/` and `.` segments. Refuses `..`
 * segments, an empty result, and absolute paths unless they lie inside an absolute room.
 */
export function normalizePattern(p: string, opts: NormalizeOptions = {}): string {
  const segments = p.split("/");
  if (segments.includes("..")) {
    throw patternError(`paths must not contain ".." segments (got ${quotePattern(p)})`);
  }
  let kept = segments.filter((s) => s !== "" && s !== ".");
  if (p.startsWith("/")) {
    const room = opts.room;
    if (room === undefined || !room.startsWith("/")) {
      throw patternError(
        `absolute paths are accepted only in a room named by an absolute directory (got ${quotePattern(p)}` +
          `${room === undefined ? "" : ` in room ${quotePattern(room)}`}); give a repository-relative path`,
      );
    }
    const roomSegments = room.split("/").filter((s) => s !== "" && s !== ".");
    const inside = roomSegments.every((s, i) => kept[i] === s);
    if (!inside) {
      throw patternError(
        `absolute path ${quotePattern(p)} is outside the room ${quotePattern(room)}; give a path inside it or a relative one`,
      );
    }
    kept = kept.slice(roomSegments.length);
    if (kept.length === 0) {
      throw patternError(`path ${quotePattern(p)} is the room itself; claim "**" for the whole tree`);
    }
  }
  if (kept.length === 0) {
    throw patternError(`path is empty after normalization (got ${quotePattern(p)}); claim "**" for the whole tree`);
  }
  return kept.join("/");
}
