// `--help`, rendered here rather than by citty's showUsage: that one never wraps (a description
// is one line however long) and colours its output unless NO_COLOR=1 exactly, even into a pipe.
// This one wraps to the terminal (80 columns when stdout is not one) and is plain text when
// piped or under NO_COLOR.
import type { ArgsDef, CommandDef } from "citty";
import { env } from "../config/env.ts";
import type { CommandRules } from "./strict.ts";

const DEFAULT_WIDTH = 80; // not a terminal (a pipe, a file, CI): the width every reader handles
const MIN_WIDTH = 40;

export function helpWidth(): number {
  const cols = process.stdout.isTTY ? process.stdout.columns : undefined;
  return Math.max(MIN_WIDTH, cols && cols > 0 ? cols : DEFAULT_WIDTH);
}

/** Words of `text` in lines of at most `width` characters (a longer word gets a line of its own). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.length ? lines : [""];
}

async function resolve<T>(v: T | Promise<T> | (() => T) | (() => Promise<T>) | undefined): Promise<T | undefined> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

/** Rows of a two-column table: the left column as wide as needed (up to a third of the width), the right wrapped beside it. */
function table(rows: [string, string][], width: number, indent = 2): string[] {
  const left = Math.min(Math.max(...rows.map(([l]) => l.length)), Math.floor(width / 3));
  const right = Math.max(20, width - indent - left - 2);
  const out: string[] = [];
  for (const [l, r] of rows) {
    const text = wrap(r, right);
    if (l.length > left) {
      out.push(" ".repeat(indent) + l);
      for (const t of text) out.push(" ".repeat(indent + left + 2) + t);
    } else {
      out.push(`${" ".repeat(indent)}${l.padEnd(left)}  ${text[0]}`);
      for (const t of text.slice(1)) out.push(" ".repeat(indent + left + 2) + t);
    }
  }
  return out;
}

function flagRows(args: ArgsDef, rules: CommandRules): [string, string][] {
  const rows: [string, string][] = [];
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const aliases = "alias" in def ? def.alias : undefined;
    const short = (Array.isArray(aliases) ? aliases : aliases ? [aliases] : []).map((a) => (a.length === 1 ? `-${a}` : `--${a}`));
    const value = def.type === "boolean" ? "" : ` ${def.valueHint ?? name.split("-").at(-1)!.toUpperCase()}`;
    const notes = [def.required === true ? "(required)" : "", def.default !== undefined && def.type !== "boolean" ? `(default ${def.default})` : ""].filter(Boolean);
    rows.push([[...short, `--${name}`].join(", ") + value, [def.description ?? "", ...notes].join(" ")]);
    if (def.type === "boolean" && (def.default === true || def.negativeDescription) && !rules.negatable?.includes(name)) {
      rows.push([`--no-${name}`, def.negativeDescription ?? ""]);
    }
  }
  rows.push(["-h, --help", "Show this help"]);
  return rows;
}

/** The help of the command reached by `names`, as plain or (on a colour terminal) bold-headed text, wrapped to `width`. */
export async function renderHelp(cmd: CommandDef<any>, names: string[], rules: CommandRules, width = helpWidth(), colour = !env.noColor): Promise<string> {
  const head = (s: string) => (colour ? `\x1b[1m${s}\x1b[22m` : s);
  const meta = (await resolve(cmd.meta)) ?? {};
  const args: ArgsDef = (await resolve(cmd.args)) ?? {};
  const subs = await resolve(cmd.subCommands);
  const positionals = Object.entries(args).filter(([, d]) => d.type === "positional");
  const flags = flagRows(args, rules);
  const usage = [
    ...names,
    ...(subs && !cmd.run ? ["COMMAND"] : []),
    ...(flags.length > 1 ? ["[flags]"] : []),
    ...positionals.map(([n, d]) => (d.required === false || d.default !== undefined ? `[${n.toUpperCase()}]` : n.toUpperCase())),
    ...(rules.rest ? [rules.command ? `-- ${rules.rest}` : rules.rest] : []),
  ].join(" ");
  const out: string[] = [...wrap(meta.description ?? "", width), ""];
  out.push(head("Usage:"), ...wrap(usage, width - 2).map((l) => `  ${l}`), "");
  if (positionals.length) {
    out.push(head("Arguments:"), ...table(positionals.map(([n, d]) => [n.toUpperCase(), d.description ?? ""]), width), "");
  }
  if (subs) {
    const rows: [string, string][] = [];
    for (const [name, sub] of Object.entries(subs)) {
      const m = (await resolve((await resolve(sub))?.meta)) ?? {};
      if (!m.hidden) rows.push([name, m.description ?? ""]);
    }
    out.push(head("Commands:"), ...table(rows, width), "");
  }
  out.push(head("Flags:"), ...table(flags, width), "");
  if (subs) out.push(...wrap(`Run \`${names.join(" ")} COMMAND --help\` for a command's flags.`, width), "");
  return out.join("\n");
}
