// The command router. Bare `airlock` (or flags only) runs the daemon, as v2 did. Every command
// line is checked first (strict.ts): a usage error exits 2 before anything is done. Errors are
// shown as one line, never a stack trace; AirlockError messages already say what to do.
import { type CommandDef, defineCommand, runCommand } from "citty";
import { AirlockError, errorMessage } from "../errors.ts";
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import { callCommand } from "./call.ts";
import { checkCommand, claimCommand, claimsCommand, unclaimCommand } from "./claims.ts";
import { daemonCommand } from "./daemon.ts";
import { doctorCommand } from "./doctor.ts";
import { logCommand } from "./log.ts";
import { mcpCommand } from "./mcp.ts";
import { installServiceCommand, uninstallServiceCommand } from "./install-service.ts";
import { poolCommand, poolsCommand } from "./pools.ts";
import { releaseCommand } from "./release.ts";
import { runSlotCommand } from "./run.ts";
import { setupCommand } from "./setup.ts";
import { hookCommand } from "./hook.ts";
import { handOverCommand } from "./hand-over.ts";
import { inboxCommand } from "./inbox.ts";
import { msgCommand } from "./msg.ts";
import { renderHelp } from "./help.ts";
import { lockCommand } from "./lock.ts";
import { checkArgs, type CommandRules } from "./strict.ts";
import { statusCommand } from "./status.ts";
import { tokenCommand } from "./token.ts";
import { uiCommand } from "./ui.ts";
import { versionCommand } from "./version.ts";
import { waitCommand } from "./wait.ts";
import { watchCommand } from "./watch.ts";

export const mainCommand = defineCommand({
  meta: { name: "airlock", version: VERSION, description: "Local coordination daemon for AI coding agents (MCP over HTTP)" },
  subCommands: {
    daemon: daemonCommand,
    status: statusCommand,
    watch: watchCommand,
    ui: uiCommand,
    log: logCommand,
    call: callCommand,
    run: runSlotCommand,
    lock: lockCommand,
    wait: waitCommand,
    release: releaseCommand,
    pools: poolsCommand,
    pool: poolCommand,
    claims: claimsCommand,
    claim: claimCommand,
    unclaim: unclaimCommand,
    check: checkCommand,
    msg: msgCommand,
    inbox: inboxCommand,
    "hand-over": handOverCommand,
    setup: setupCommand,
    hook: hookCommand,
    mcp: mcpCommand,
    token: tokenCommand,
    "install-service": installServiceCommand,
    "uninstall-service": uninstallServiceCommand,
    version: versionCommand,
    doctor: doctorCommand,
  },
});

// What a command accepts beyond its declared args (see strict.ts). Kept here, with the
// catalogue, so that each command file stays a plain citty command.
const RULES = new Map<CommandDef<any>, CommandRules>([
  [claimCommand, { rest: "PATH..." }],
  [checkCommand, { rest: "PATH..." }],
  [msgCommand, { rest: "TO TEXT..." }],
  [runSlotCommand, { rest: "CMD...", command: true }],
  [lockCommand, { rest: "CMD...", command: true }],
  [daemonCommand, { negatable: ["socket"] }],
  // A hook never breaks its client: a flag it does not know is warned about, and it still answers.
  [hookCommand, { lenient: true }],
]);
export const rulesOf = (cmd: CommandDef<any>): CommandRules => RULES.get(cmd) ?? {};

/** Exit code of a command line refused before anything was done (as getopt-style tools do). */
export const USAGE_EXIT = 2;

export async function main(argv: string[]): Promise<void> {
  const first = argv[0];
  if (first === "--version" || first === "-v") {
    console.log(`airlock ${VERSION}`);
    return;
  }
  // `airlock help pool set` is `airlock pool set --help`; bare flags run the daemon, as v2 did.
  const rawArgs = first === "help" ? [...argv.slice(1), "--help"] : first === undefined || (first.startsWith("-") && first !== "--help" && first !== "-h") ? ["daemon", ...argv] : argv;
  try {
    const checked = await checkArgs(mainCommand, rawArgs, rulesOf);
    if (checked.help) {
      process.stdout.write(await renderHelp(checked.cmd, checked.names, rulesOf(checked.cmd)));
      return;
    }
    for (const w of checked.warnings) process.stderr.write(`warning: ${w} (ignored)\n`);
    await runCommand(mainCommand, { rawArgs });
  } catch (err) {
    if (err instanceof AirlockError && err.code === "usage") {
      process.stderr.write(`${err.message}\n`);
      process.exit(USAGE_EXIT);
    }
    log.error(errorMessage(err));
    process.exit(1);
  }
}
