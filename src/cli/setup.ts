// `airlock setup [client] [--project DIR] [--dry-run] [--remove]`: connect an agent client to
// Airlock (MCP server entry, policy, hooks), merge-only and undoable. Bare `airlock setup` lists
// the clients found on this machine and what each has installed. After writing, it proves the
// hook command runs and, for Codex, records hook trust (src/clients/after-setup.ts); what must
// be fixed is printed as a block on stderr and the exit code is 1 (the files stay written).
// On Linux, where the daemon always requires a token, setup creates the token file the daemon
// would create on its first start (same file, same O_EXCL), so no entry is written without auth.
import { defineCommand } from "citty";
import { checkHookCommand, codexTrust, writesHooks, type StepReport } from "../clients/after-setup.ts";
import { applyParts, diffOf, installedParts, setupContext, type Change, type Client, type SetupContext } from "../clients/client.ts";
import { discoveredUrl } from "../config/discovery.ts";
import { CLIENTS, findClient } from "../clients/index.ts";
import { clientToken, resolveToken } from "../config/token.ts";
import { tokenPath } from "../config/dirs.ts";
import { AirlockError, errorMessage } from "../errors.ts";

/** A problem block: loud, on stderr, one prefix per line so it stands out in any log. */
function shout(lines: string[]): void {
  process.stderr.write(`\n${["WARNING", ...lines].map((l) => `!! ${l}`).join("\n")}\n`);
}

/**
 * Makes sure a token exists before an entry that needs one is written: on Linux, creates it;
 * on macOS, where auth stays off without one, says that the entries have no auth.
 */
function ensureToken(dryRun: boolean): string[] {
  if (clientToken() !== undefined) return [];
  if (process.platform === "darwin") {
    return ["No token (on macOS auth stays off until ~/.airlock/token exists or AIRLOCK_TOKEN is set): the entries have no auth header. If you turn auth on later, run this setup again."];
  }
  if (dryRun) return [`No token yet: setup would create ${tokenPath()} (the daemon uses it).`];
  resolveToken();
  return [`Created the token file ${tokenPath()} (the daemon would on its first start; it will use this one).`];
}

/**
 * A project's entry names the default place (every teammate's daemon); when this user's daemon
 * runs elsewhere, it is the user-scope entry that should point there.
 */
function projectUrlWarning(client: Client, ctx: SetupContext): string[] | undefined {
  if (!client.parts(ctx).some((p) => p.what === "MCP server")) return undefined;
  const mine = discoveredUrl();
  if (mine === ctx.url) return undefined;
  return [
    `The project's entry points at ${ctx.url} (the default, for every teammate), but your daemon runs at ${mine}.`,
    `Your own entry is what should point there: run \`airlock setup ${client.id}\` (your user scope), or run the daemon on the default port. Set AIRLOCK_PORT to write another port into the project.`,
  ];
}

/**
 * One line of bare `airlock setup`: every client, found or not, and which parts are in place (a
 * file that does not parse is said so, not thrown: the other clients are still listed).
 */
export function clientLine(c: Client, ctx: SetupContext): string {
  const where = c.detect(ctx);
  const parts = c.parts(ctx);
  let state: string;
  try {
    const have = installedParts(parts);
    const missing = parts.map((p) => p.what).filter((w) => !have.includes(w));
    state = parts.length === 0 ? "prints what to paste" : have.length === 0 ? "not set up" : `installed: ${have.join(", ")}${missing.length ? ` (missing: ${missing.join(", ")})` : ""}`;
  } catch (err) {
    state = `cannot tell: ${errorMessage(err)}`;
  }
  return `${c.id.padEnd(12)} ${where ? `found (${where})` : "not found"}; ${state}`;
}

function summary(changes: Change[], verb: string): string[] {
  return changes.map((c) => `${verb} ${c.path} (${c.what.join(", ")})${c.after === null ? " — file removed" : c.before === null ? " — new file" : ""}`);
}

export const setupCommand = defineCommand({
  meta: { name: "setup", description: "Connect an agent client to Airlock: MCP server, policy and hooks (bare: list clients)" },
  args: {
    client: { type: "positional", required: false, description: `One of: ${CLIENTS.map((c) => c.id).join(", ")}` },
    project: { type: "string", description: "Write the project's config in DIR instead of your user config" },
    "dry-run": { type: "boolean", description: "Print a unified diff of every file it would change; change nothing" },
    remove: { type: "boolean", description: "Take out exactly what setup added" },
  },
  async run({ args }) {
    if (!args.client && args.remove) {
      throw new AirlockError("usage", `airlock setup: --remove needs a client: airlock setup <client> --remove (one of: ${CLIENTS.map((c) => c.id).join(", ")})`);
    }
    if (!args.client) {
      const ctx = setupContext({ project: args.project });
      for (const c of CLIENTS) console.log(clientLine(c, ctx));
      console.log(`\nRun: airlock setup <client> [--project DIR] [--dry-run] [--remove]`);
      return;
    }
    const client = findClient(args.client);
    if (!client) throw new AirlockError("invalid_argument", `unknown client "${args.client}"; choose one of: ${CLIENTS.map((c) => c.id).join(", ")}`);
    const dryRun = Boolean(args["dry-run"]);
    const remove = Boolean(args.remove);
    const tokenNotes = remove || client.parts(setupContext({ project: args.project })).length === 0 ? [] : ensureToken(dryRun);
    const ctx = setupContext({ project: args.project });
    const reports: StepReport[] = [];
    // Our trust entries go first on --remove, so that a config.toml setup created is empty after.
    if (remove && client.id === "codex") reports.push(await codexTrust(ctx, { remove, dryRun }));
    const changes = await applyParts(client.parts(ctx), { remove, dryRun, airlockHome: ctx.airlockHome });
    if (dryRun) {
      process.stdout.write(diffOf(changes));
      if (changes.length === 0) console.log(`${client.name}: nothing to change`);
    } else {
      const lines = summary(changes, remove ? "updated" : "wrote");
      if (lines.length === 0 && client.parts(ctx).length > 0) console.log(`${client.name}: already ${remove ? "removed" : "set up"}; nothing changed`);
      for (const l of lines) console.log(l);
    }
    for (const n of tokenNotes) console.log(`\n${n}`);
    if (!remove && !dryRun && writesHooks(client, ctx)) reports.push(checkHookCommand(client, ctx));
    if (!remove && client.id === "codex") reports.push(await codexTrust(ctx, { remove, dryRun }));
    if (!remove && ctx.project) {
      const warning = projectUrlWarning(client, ctx);
      if (warning) reports.push({ info: [], warning });
    }
    for (const r of reports) if (r.info.length) console.log(`\n${r.info.join("\n")}`);
    if (!remove) for (const n of client.notes?.(ctx) ?? []) console.log(`\n${n}`);
    for (const w of reports.flatMap((r) => (r.warning ? [r.warning] : []))) shout(w);
    const problems = reports.flatMap((r) => (r.problem ? [r.problem] : []));
    for (const p of problems) shout(p);
    if (problems.length) process.exitCode = 1;
  },
});
