// Quoting for a POSIX shell line: the one function every command line we print or write uses
// (hook commands, headersHelper, the default reason of `airlock run`/`lock`).

/** A word as sh reads it back: bare when it holds only safe characters, else single-quoted. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}
