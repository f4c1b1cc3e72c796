// docs/cli.md against the commands themselves: every verb has a row in its tables, and a row's
// Flags column names exactly the flags the command declares (what its --help lists), each in a
// spelling the command accepts (`--no-pid-binding`, `-f`). A flag added to a command without a
// word in the docs, or a documented flag that is gone, fails here.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ArgsDef, CommandDef } from "citty";
import { mainCommand, rulesOf } from "../../src/cli/index.ts";
import { flagsOf } from "../../src/cli/strict.ts";

const DOC = readFileSync(join(import.meta.dir, "../../docs/cli.md"), "utf8");

type Cmd = CommandDef<any>;
const resolve = async <T>(v: T | Promise<T> | (() => T | Promise<T>) | undefined): Promise<T | undefined> =>
  typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;

/** Every command that runs, by its words (`pool set`). */
async function commands(cmd: Cmd = mainCommand, names: string[] = []): Promise<Map<string, Cmd>> {
  const out = new Map<string, Cmd>();
  if (cmd.run && names.length > 0) out.set(names.join(" "), cmd);
  for (const [name, sub] of Object.entries((await resolve(cmd.subCommands)) ?? {})) {
    for (const [k, v] of await commands((await resolve(sub as Cmd))!, [...names, name])) out.set(k, v);
  }
  return out;
}

/** The table rows of the document: [verb cell, flags cell], for tables headed `| Verb | Flags |`. */
function rows(): [string, string][] {
  const out: [string, string][] = [];
  let inTable = false;
  for (const line of DOC.split("\n")) {
    if (!line.startsWith("|")) {
      inTable = false;
      continue;
    }
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    if (cells[0] === "Verb" && cells[1] === "Flags") inTable = true;
    else if (inTable && !/^-+$/.test(cells[0]!)) out.push([cells[0]!, cells[1]!]);
  }
  return out;
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The command a verb cell names: its first code span whose leading words reach a command. */
function verbOf(cell: string, known: Map<string, Cmd>): string | undefined {
  for (const span of codeSpans(cell)) {
    const words = span.split(/\s+/).filter((w) => w !== "airlock");
    for (let n = words.length; n > 0; n--) if (known.has(words.slice(0, n).join(" "))) return words.slice(0, n).join(" ");
  }
  return undefined;
}

describe("docs/cli.md", async () => {
  const known = await commands();
  const documented = new Map<string, string>();
  for (const [verb, flags] of rows()) {
    const name = verbOf(verb, known);
    if (name === undefined) throw new Error(`docs/cli.md: a row names no command: ${verb}`);
    documented.set(name, flags);
  }

  test("every command has a row", () => {
    expect([...known.keys()].filter((k) => !documented.has(k))).toEqual([]);
  });

  for (const [name, cmd] of known) {
    test(`${name}: the Flags column names exactly its declared flags`, async () => {
      const args: ArgsDef = (await resolve(cmd.args)) ?? {};
      const spellings = flagsOf(args, rulesOf(cmd));
      const cell = documented.get(name) ?? "";
      const tokens = codeSpans(cell).flatMap((s) => [...s.matchAll(/(?<![\w-])(--?[a-z][\w-]*)/g)].map((m) => m[1]!));
      expect(tokens.filter((t) => !spellings.has(t))).toEqual([]); // every documented spelling is accepted
      const named = new Set(tokens.map((t) => spellings.get(t)?.name));
      const declared = Object.entries(args).filter(([, d]) => d.type !== "positional").map(([n]) => n);
      expect(declared.filter((n) => !named.has(n))).toEqual([]); // every declared flag is documented
    });
  }
});
