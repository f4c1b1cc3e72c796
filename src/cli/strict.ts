// Strict arguments (SPEC §8). citty parses leniently: an unknown `--agnet bob` becomes a boolean
// `agnet` and a positional `bob`, and a typo'd `--dryrun` is simply ignored, so the command goes
// on and does something else than asked. Every command line is checked here, once, against the
// declared args of the command it reaches (walking the subcommand chain), before anything runs:
// an unknown flag, a string flag without its value, an unknown command or a word the command
// does not take is a usage error (exit 2) with a "did you mean". Words after `--` are never
// flags. For `run` and `lock` they are the command to start, and only that: they never fill the
// command's own positionals (`lock -- npm ci` is a missing NAME, not a lock named npm), and no
// extra word may come before `--` (it would be dropped or taken for something else).
import type { ArgsDef, CommandDef } from "citty";

// Any command, whatever its args (citty's CommandDef is invariant in them).
type AnyCommand = CommandDef<any>;
import { AirlockError } from "../errors.ts";

/** What a command accepts beyond its declared args. */
export interface CommandRules {
  /** It reads extra positionals from `args._` (shown as e.g. `PATH...` or `CMD...`). */
  rest?: string;
  /**
   * The extra words are a command to start (`run`, `lock`), which is required: after `--`, the
   * words there are all of it (none before `--` beyond the declared positionals, none of them
   * fills one); without `--`, the positionals beyond the declared ones are the command.
   */
  command?: true;
  /** String flags that also take a `--no-NAME` form (daemon's `--no-socket`). */
  negatable?: string[];
  /** Usage problems are warned about on stderr and the command still runs (a hook never breaks its client). */
  lenient?: boolean;
}

export type RulesOf = (cmd: AnyCommand) => CommandRules;

/** A command reached by the words, with the names that led to it (`["airlock", "pool", "set"]`). */
export interface Reached {
  cmd: AnyCommand;
  names: string[];
}

export type Checked = ({ help: true } & Reached) | ({ help: false; warnings: string[] } & Reached);

interface Flag {
  name: string;
  type: "string" | "boolean";
  negated?: true;
}

async function resolve<T>(v: T | Promise<T> | (() => T) | (() => Promise<T>) | undefined): Promise<T | undefined> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

const camel = (s: string) => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Every spelling citty accepts for the command's flags: --name, its camelCase and kebab-case, aliases, --no-name for booleans. */
export function flagsOf(args: ArgsDef, rules: CommandRules = {}): Map<string, Flag> {
  const flags = new Map<string, Flag>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const type = def.type === "boolean" ? "boolean" : "string";
    const spellings = new Set([name, camel(name), kebab(name)]);
    for (const s of spellings) flags.set(`--${s}`, { name, type });
    const aliases = "alias" in def ? def.alias : undefined;
    for (const a of Array.isArray(aliases) ? aliases : aliases ? [aliases] : []) flags.set(a.length === 1 ? `-${a}` : `--${a}`, { name, type });
    if (type === "boolean" || rules.negatable?.includes(name)) for (const s of spellings) flags.set(`--no-${s}`, { name, type: "boolean", negated: true });
  }
  return flags;
}

/** Damerau-Levenshtein distance (a swap of two neighbours counts one: agnet → agent). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to what was typed, if it is close enough to be what was meant:
 * the same letters without dashes (`--dryrun`), a prefix (`--pol`), or a small edit distance.
 */
export function closest(typed: string, candidates: Iterable<string>): string | undefined {
  const bare = (s: string) => s.replace(/^-+/, "").replaceAll("-", "").toLowerCase();
  const t = bare(typed);
  let best: { c: string; score: number } | undefined;
  for (const c of candidates) {
    const b = bare(c);
    let score: number;
    if (b === t) score = 0;
    else if (t.length >= 2 && b.startsWith(t)) score = 0.5;
    else score = editDistance(t, b);
    if (score <= Math.max(1, Math.floor(b.length / 3)) && (!best || score < best.score)) best = { c, score };
  }
  return best?.c;
}

const looksLikeFlag = (w: string) => w.startsWith("-") && w !== "-" && !/^-\d/.test(w); // -5, -0.5 and - are values

/** `airlock lock [flags] NAME -- CMD...`: how a command that starts a command is given, as its help shows it. */
function commandUsage(names: string[], declared: [string, ArgsDef[string]][], rules: CommandRules): string {
  const positionals = declared.map(([n, d]) => (d.required === false || d.default !== undefined ? `[${n.toUpperCase()}]` : n.toUpperCase()));
  return [...names, "[flags]", ...positionals, `-- ${rules.rest ?? "CMD..."}`].join(" ");
}

function usageError(names: string[], problem: string, suggestion?: string, after?: string): AirlockError {
  const lines = [`${names.join(" ")}: ${problem}`];
  if (suggestion) lines.push(`did you mean ${suggestion}?`);
  if (after) lines.push(after);
  lines.push(`see: ${names.join(" ")} --help`);
  return new AirlockError("usage", lines.join("\n"));
}

/**
 * Checks the words (after the router turned bare flags into `daemon ...`) against the command
 * tree. Throws AirlockError("usage") naming the first problem; `--help` or `-h` anywhere before
 * `--` asks for the reached command's help instead, whatever else is wrong.
 */
export async function checkArgs(root: AnyCommand, rawArgs: string[], rulesOf: RulesOf = () => ({})): Promise<Checked> {
  const end = rawArgs.indexOf("--");
  const words = end >= 0 ? rawArgs.slice(0, end) : rawArgs;
  const afterDashes = end >= 0 ? rawArgs.slice(end + 1) : [];
  const names = [(await resolve(root.meta))?.name ?? "airlock"];
  let cmd = root;
  const help = words.some((w) => w === "--help" || w === "-h");
  const problems: AirlockError[] = [];
  let i = 0;
  for (;;) {
    const rules = rulesOf(cmd);
    const args: ArgsDef = (await resolve(cmd.args)) ?? {};
    const flags = flagsOf(args, rules);
    const subs = await resolve(cmd.subCommands);
    const declared = Object.entries(args).filter(([, d]) => d.type === "positional");
    const positionals: string[] = [];
    const given = new Set<string>();
    let next: AnyCommand | undefined;
    for (; i < words.length && problems.length === 0; i++) {
      const w = words[i]!;
      if (w === "--help" || w === "-h") continue;
      if (looksLikeFlag(w)) {
        const eq = w.startsWith("--") ? w.indexOf("=") : -1;
        const key = eq >= 0 ? w.slice(0, eq) : w;
        const f = flags.get(key);
        if (!f) {
          const hint = rules.command && positionals.length > declared.length ? `a flag of the command goes after --: ${commandUsage(names, declared, rules)}` : undefined;
          problems.push(usageError(names, `unknown flag ${key}`, closest(key, flags.keys()), hint));
          break;
        }
        given.add(f.name);
        if (f.type === "boolean") {
          if (eq >= 0 && (f.negated || !["true", "false"].includes(w.slice(eq + 1)))) problems.push(usageError(names, `${key} takes no value (got ${JSON.stringify(w)})`));
          continue;
        }
        if (eq >= 0) continue;
        const value = words[i + 1];
        if (value === undefined || looksLikeFlag(value)) {
          const missing = value === undefined && end >= 0 ? "--" : value;
          problems.push(usageError(names, `${key} needs a value${missing === undefined ? "" : ` (got ${missing} instead)`}`, undefined, `give it as ${key} VALUE, or ${key}=VALUE for a value that starts with -`));
          break;
        }
        i++;
        continue;
      }
      if (subs && declared.length === 0 && positionals.length === 0) {
        const sub = subs[w] !== undefined ? await resolve(subs[w]) : undefined;
        if (!sub) {
          problems.push(usageError(names, `unknown command ${w}`, closest(w, Object.keys(subs))));
          break;
        }
        names.push(w);
        next = sub;
        i++;
        break;
      }
      positionals.push(w);
    }
    if (next) {
      cmd = next;
      continue;
    }
    if (problems.length === 0) {
      const command = rules.command ? (end >= 0 ? afterDashes : positionals.slice(declared.length)) : [];
      if (!rules.command) positionals.push(...afterDashes);
      if (rules.command && end >= 0 && positionals.length > declared.length) {
        const extra = positionals.slice(declared.length);
        problems.push(usageError(names, `the command goes after -- only; got ${extra.map((x) => JSON.stringify(x)).join(" ")} before it`, undefined, `usage: ${commandUsage(names, declared, rules)}`));
      } else if (subs && !cmd.run) {
        problems.push(usageError(names, `needs a command: ${Object.keys(subs).join(", ")}`));
      } else if (positionals.length > declared.length && !rules.rest) {
        const extra = positionals.slice(declared.length);
        const what = declared.length === 0 ? "takes no arguments" : `takes ${declared.length === 1 ? "one argument" : `${declared.length} arguments`} (${declared.map(([n]) => n.toUpperCase()).join(" ")})`;
        problems.push(usageError(names, `${what}; got ${extra.map((x) => JSON.stringify(x)).join(" ")} as well`));
      } else {
        const missing = declared.slice(positionals.length).find(([, d]) => d.required !== false && d.default === undefined);
        if (missing) problems.push(usageError(names, `missing ${missing[0].toUpperCase()}`));
        const flag = Object.entries(args).find(([n, d]) => d.type !== "positional" && d.required === true && d.default === undefined && !given.has(n));
        if (!missing && flag) problems.push(usageError(names, `missing --${flag[0]}`));
        if (!missing && !flag && rules.command && command.length === 0) {
          problems.push(usageError(names, `missing ${(rules.rest ?? "CMD...").replace(/\.+$/, "")}`, undefined, `usage: ${commandUsage(names, declared, rules)}`));
        }
      }
    }
    if (help) return { help: true, cmd, names };
    if (problems.length === 0) return { help: false, cmd, names, warnings: [] };
    if (rules.lenient) return { help: false, cmd, names, warnings: problems.map((p) => p.message.split("\n")[0]!) };
    throw problems[0]!;
  }
}
