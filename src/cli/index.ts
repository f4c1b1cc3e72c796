// The command router. Bare `airlock` (or flags only) runs the daemon, as v2 did. Errors are
// shown as one line, never a stack trace; AirlockError messages already say what to do.
import { defineCommand, runCommand, runMain, showUsage } from "citty";
import { AirlockError, errorMessage } from "../errors.ts";
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import { callCommand } from "./call.ts";
import { checkCommand, claimCommand, claimsCommand, unclaimCommand } from "./claims.ts";
import { daemonCommand } from "./daemon.ts";
import { doctorCommand } from "./doctor.ts";
import { logCommand } from "./log.ts";
import { installServiceCommand, uninstallServiceCommand } from "./install-service.ts";
import { poolCommand, poolsCommand } from "./pools.ts";
import { releaseCommand } from "./release.ts";
import { runSlotCommand } from "./run.ts";
import { setupCommand } from "./setup.ts";
import { hookCommand } from "./hook.ts";
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
    wait: waitCommand,
    release: releaseCommand,
    pools: poolsCommand,
    pool: poolCommand,
    claims: claimsCommand,
    claim: claimCommand,
    unclaim: unclaimCommand,
    check: checkCommand,
    setup: setupCommand,
    hook: hookCommand,
    token: tokenCommand,
    "install-service": installServiceCommand,
    "uninstall-service": uninstallServiceCommand,
    version: versionCommand,
    doctor: doctorCommand,
  },
});

const HELP = new Set(["--help", "-h", "help"]);

export async function main(argv: string[]): Promise<void> {
  const first = argv[0];
  if (first === "--version" || first === "-v") {
    console.log(`airlock ${VERSION}`);
    return;
  }
  // Words after `--` belong to the command `airlock run` runs (`-- grep -h x`), not to us.
  const ours = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  if (ours.some((a) => HELP.has(a))) return runMain(mainCommand, { rawArgs: ours.map((a) => (a === "help" ? "--help" : a)) });
  const rawArgs = first === undefined || first.startsWith("-") ? ["daemon", ...argv] : argv;
  try {
    await runCommand(mainCommand, { rawArgs });
  } catch (err) {
    if (err instanceof AirlockError) {
      log.error(err.message);
    } else if ((err as { code?: string }).code?.startsWith("E_")) {
      await showUsage(mainCommand);
      log.error(errorMessage(err));
    } else {
      log.error(errorMessage(err));
    }
    process.exit(1);
  }
}
