// The glob overlap engine for path claims: patterns in, a witness path out. Pure: no store, no
// I/O, no clock. Semantics in brief (each module's header has the reasons):
//  - `*` any run within a segment, `?` one character, `[...]` a class (`[!...]`/`[^...]` negate;
//    never `/`), `{a,b}` alternatives (nested, may hold `/`), `\` escapes; `**` is zero or more
//    whole segments when it is a segment on its own (in the brace branch taken), else `*`.
//  - `dir/**` covers `dir`; `src/a*/**` covers `src/ab`; a fully literal pattern also covers
//    everything below it (it may be a directory). A pattern that merely ends in a literal
//    segment (`src/*/api`) does not: it says what it matches.
//  - `{}` is one empty branch and `{a}` one branch; a stray `]`, `}` or `,` is an ordinary
//    character. Refused as malformed: an unclosed `[` or `{`, a trailing lone `\`, an escaped
//    `/`, a `/` inside a class, a reversed range, POSIX classes (`[[:alpha:]]`).
//  - A path has no empty, `.` or `..` segments; a witness is such a path, and has no glob
//    characters unless every common path has one.
export { compileGlob, matches, type CompiledGlob, type GlobOptions } from "./compile.ts";
export { overlap } from "./overlap.ts";
export { normalizePattern, type NormalizeOptions } from "./normalize.ts";
export { isLiteral } from "./parse.ts";
export {
  GLOB_CACHE_SIZE,
  MAX_ALTERNATIVES,
  MAX_AUTOMATON_STATES,
  MAX_BRACE_DEPTH,
  MAX_PATTERN_LENGTH,
  MAX_SEGMENTS,
  MAX_WILDCARD_TAIL,
  MAX_CHECK_STEPS,
  checkBudget,
  type CheckBudget,
} from "./limits.ts";
