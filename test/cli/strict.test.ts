// Strict arguments and the help renderer, without a daemon: what is refused (with which
// suggestion), what passes, and help that fits the width it is given.
import { describe, expect, test } from "bun:test";
import { defineCommand } from "citty";
import { renderHelp, wrap } from "../../src/cli/help.ts";
import { checkArgs, closest, editDistance } from "../../src/cli/strict.ts";

const run = defineCommand({
  meta: { name: "run", description: "Run a command with a slot in a pool. ".repeat(6) },
  args: {
    pool: { type: "string", description: "Pool to take a slot in (default heavy)" },
    "pid-binding": { type: "boolean", default: true, description: "Bind the slot by pid" },
    follow: { type: "boolean", alias: "f", description: "Keep going" },
  },
  run() {},
});
const set = defineCommand({ meta: { name: "set" }, args: { name: { type: "positional", required: true }, capacity: { type: "string", required: true } }, run() {} });
const lock = defineCommand({ meta: { name: "lock" }, args: { name: { type: "positional", required: true }, wait: { type: "string" } }, run() {} });
const claim = defineCommand({ meta: { name: "claim" }, args: { agent: { type: "string" } }, run() {} });
const root = defineCommand({ meta: { name: "airlock" }, subCommands: { run, lock, claim, pool: defineCommand({ meta: { name: "pool" }, subCommands: { set } }) } });
const rules = (cmd: unknown) => (cmd === run || cmd === lock ? { rest: "CMD...", command: true as const } : cmd === claim ? { rest: "PATH..." } : {});

const refusal = async (words: string[]) => {
  try {
    await checkArgs(root, words, rules);
  } catch (err) {
    return (err as Error & { code: string }).code === "usage" ? (err as Error).message : `not a usage error: ${err}`;
  }
  return "accepted";
};

describe("suggestions", () => {
  test("a swap, a missing dash and a prefix each find the flag meant", () => {
    expect(editDistance("agnet", "agent")).toBe(1);
    expect(closest("--agnet", ["--agent", "--room"])).toBe("--agent");
    expect(closest("--dryrun", ["--dry-run", "--remove"])).toBe("--dry-run");
    expect(closest("--pol", ["--pool", "--port"])).toBe("--pool");
    expect(closest("--frobnicate", ["--pool", "--port"])).toBeUndefined();
  });
});

describe("checkArgs", () => {
  test("refuses an unknown flag, a missing value, an unknown command, an extra word and a missing argument", async () => {
    expect(await refusal(["run", "--pol", "gpu", "--", "true"])).toContain("unknown flag --pol\ndid you mean --pool?");
    expect(await refusal(["run", "--pool"])).toContain("--pool needs a value");
    expect(await refusal(["run", "--pool", "--follow"])).toContain("--pool needs a value (got --follow instead)");
    expect(await refusal(["rnu"])).toContain("unknown command rnu\ndid you mean run?");
    expect(await refusal(["pool"])).toContain("needs a command: set");
    expect(await refusal(["pool", "set", "heavy", "extra", "--capacity", "1"])).toContain('got "extra" as well');
    expect(await refusal(["pool", "set", "heavy"])).toContain("missing --capacity");
    expect(await refusal(["pool", "set", "--capacity", "1"])).toContain("missing NAME");
    expect(await refusal(["run", "--follow=yes", "--", "x"])).toContain("takes no value");
  });

  test("accepts declared spellings, negations, aliases, values that look negative, and anything after --", async () => {
    for (const words of [
      ["run", "--pool=gpu", "--", "x"],
      ["run", "--no-pid-binding", "-f", "--", "x", "--dryrun"],
      ["run", "--pidBinding", "--", "x"],
      ["run", "--pool", "-5", "--", "x"],
      ["pool", "set", "heavy", "--capacity", "2"],
    ]) {
      expect(await refusal(words)).toBe("accepted");
    }
    expect(await refusal(["run", "--no-pool", "--", "x"])).toContain("unknown flag --no-pool");
  });

  test("the command of run and lock: after -- it is all there is, and one is needed", async () => {
    expect(await refusal(["lock", "--", "npm", "ci"])).toContain("airlock lock: missing NAME");
    expect(await refusal(["lock", "L1", "echo", "a", "--", "b"])).toBe('airlock lock: the command goes after -- only; got "echo" "a" before it\nusage: airlock lock [flags] NAME -- CMD...\nsee: airlock lock --help');
    expect(await refusal(["run", "echo", "--", "b"])).toContain('got "echo" before it\nusage: airlock run [flags] -- CMD...');
    for (const words of [["run"], ["run", "--"], ["lock", "L1"], ["lock", "L1", "--wait", "1", "--"]]) expect(await refusal(words)).toContain("missing CMD\nusage:");
    for (const words of [["run", "echo", "a"], ["lock", "L1", "echo", "a"], ["lock", "L1", "--", "echo", "--", "a"], ["claim", "a", "--", "-b"]]) expect(await refusal(words)).toBe("accepted");
    // A typo'd flag of lock's own after its NAME is just that, not a flag of the command.
    expect(await refusal(["lock", "L1", "--wiat", "1", "--", "x"])).not.toContain("after --");
    expect(await refusal(["lock", "L1", "echo", "--wiat"])).toContain("a flag of the command goes after --: airlock lock [flags] NAME -- CMD...");
    expect(await refusal(["claim", "a/**", "--agnet", "x"])).not.toContain("after --");
  });

  test("--help anywhere before -- asks for the reached command's help, whatever else is wrong", async () => {
    expect(await checkArgs(root, ["pool", "set", "--bogus", "--help"], rules)).toMatchObject({ help: true, cmd: set, names: ["airlock", "pool", "set"] });
    expect(await checkArgs(root, ["run", "--", "grep", "--help"], rules)).toMatchObject({ help: false });
  });
});

describe("help", () => {
  test("wraps to the width given and has no ANSI without colour", async () => {
    for (const width of [40, 80, 120]) {
      const text = await renderHelp(run, ["airlock", "run"], { rest: "CMD...", command: true }, width, false);
      expect(text).not.toContain("\x1b");
      for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(width);
      expect(text).toContain("airlock run [flags] -- CMD...");
      expect(text).toContain("--no-pid-binding");
      expect(text).toContain("-f, --follow");
    }
    expect(wrap("a b c", 3)).toEqual(["a b", "c"]);
  });
});
