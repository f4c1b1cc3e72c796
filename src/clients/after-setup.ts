// What `airlock setup` does once the files are written: prove that the hook command runs (a
// hook that does not resolve fails open on every edit, so this is said loudly), and for Codex
// record hook trust through Codex's app-server (src/clients/codex-trust.ts), or say what to run
// when Codex is not installed. Each step returns lines to print and whether something is wrong.
import { join } from "node:path";
import { errorMessage } from "../errors.ts";
import type { Client, SetupContext } from "./client.ts";
import { codexHome, codexPaths } from "./codex.ts";
import { trustCodexHooks, untrustCodexHooks, type CodexHook } from "./codex-trust.ts";
import { verifyCommand } from "./command.ts";
import { readState, writeState } from "./files.ts";

export interface StepReport {
  /** Plain lines for stdout. */
  info: string[];
  /** A block for stderr: something the user must fix; setup then exits 1. */
  problem?: string[];
  /** A block for stderr too, for a step that could not be done yet (exit code unchanged). */
  warning?: string[];
}

/** Clients whose setup writes hooks (the others have no command to check). */
export function writesHooks(client: Client, ctx: SetupContext): boolean {
  return client.parts(ctx).some((p) => p.what === "hooks");
}

/** Runs `<cmd> version` through sh, as the client will run the hooks. */
export function checkHookCommand(client: Client, ctx: SetupContext): StepReport {
  const r = verifyCommand(ctx.airlock);
  if (r.ok) return { info: [`Hook command checked: \`${ctx.airlock} version\` prints "${r.output}".`] };
  const fix = ctx.project
    ? "A project file names the bare `airlock`, which every teammate has on PATH: install airlock (install.sh or Homebrew), or from a checkout run `bun link` there, then run this setup again."
    : "Install airlock so that `airlock` is on PATH (install.sh or Homebrew), then run this setup again.";
  return {
    info: [],
    problem: [
      `The hooks ${client.name} will run do not work: \`${ctx.airlock} version\` failed (${r.output}).`,
      "Until this is fixed every hook fails and edits are NOT checked against other agents' claims.",
      `The files were written. ${fix}`,
    ],
  };
}

/** Where setup remembers which hook-trust entries (key → hash) it had Codex write. */
const trustStateKey = (configFile: string) => `codex-hook-trust:${configFile}`;

const EVENT_NAMES: Record<string, string> = {
  sessionStart: "SessionStart",
  preToolUse: "PreToolUse",
  postToolUse: "PostToolUse",
  userPromptSubmit: "UserPromptSubmit",
  stop: "Stop",
};
const shortHash = (h: string) => (h.length > 23 ? `${h.slice(0, 23)}…` : h);

function hookLine(h: CodexHook): string {
  return `  ${(EVENT_NAMES[h.eventName] ?? h.eventName).padEnd(16)} ${h.trustStatus.padEnd(9)} ${h.command}  ${shortHash(h.currentHash)}`;
}

/** Codex's own hook trust for the hooks setup wrote (or, with remove, takes ours out again). */
export async function codexTrust(ctx: SetupContext, o: { remove: boolean; dryRun: boolean; which?: (n: string) => string | null }): Promise<StepReport> {
  const userConfig = join(codexHome(ctx), "config.toml");
  const hooksFile = codexPaths(ctx).hooks;
  const key = trustStateKey(userConfig);
  const state = readState(ctx.airlockHome);
  if (o.remove) {
    const all = state[key]?.trustedHashes ?? {};
    const mine = Object.fromEntries(Object.entries(all).filter(([k]) => k.startsWith(`${hooksFile}:`)));
    if (Object.keys(mine).length === 0) return { info: [] };
    try {
      const removed = await untrustCodexHooks(userConfig, mine, o.dryRun);
      if (!o.dryRun) {
        // A key that holds another hash now is the user's: forgotten, never removed.
        const left = Object.fromEntries(Object.entries(all).filter(([k]) => !(k in mine)));
        if (Object.keys(left).length) state[key] = { trustedHashes: left };
        else delete state[key];
        writeState(ctx.airlockHome, state);
      }
      return { info: removed.length ? [`${o.dryRun ? "Would remove" : "Removed"} Codex's trust of ${removed.length} airlock hook(s) from ${userConfig}.`] : [] };
    } catch (err) {
      return { info: [], problem: [errorMessage(err)] };
    }
  }
  const codex = (o.which ?? Bun.which)("codex");
  const how = "open /hooks in Codex and trust the five airlock hooks";
  if (!codex) {
    return {
      info: [],
      warning: [
        "Codex is not installed here (no `codex` on PATH), so the hooks are not trusted yet, and Codex skips untrusted hooks without a word.",
        `After installing Codex, run \`airlock setup codex${ctx.project ? ` --project ${ctx.project}` : ""}\` again (it trusts them through \`codex app-server\`), or ${how}.`,
      ],
    };
  }
  if (o.dryRun) return { info: [`Would trust the airlock hooks through \`${codex} app-server\` (hooks/list, then config/batchWrite into ${userConfig}).`] };
  try {
    const r = await trustCodexHooks({ codex, cwd: ctx.project ?? ctx.home, hooksFile });
    if (r.trusted.length) {
      const fresh = readState(ctx.airlockHome);
      fresh[key] = { trustedHashes: { ...fresh[key]?.trustedHashes, ...Object.fromEntries(r.trusted.map((h) => [h.key, h.currentHash])) } };
      writeState(ctx.airlockHome, fresh);
    }
    if (r.hooks.length === 0) {
      // An untrusted project is the user's call (a warning); a user file Codex ignores is a fault.
      if (ctx.project) {
        return { info: [], warning: [`Codex lists none of the airlock hooks: it loads a project's .codex/hooks.json only in a trusted project. Trust the project in Codex, then run this setup again, or ${how}.`] };
      }
      return { info: [], problem: [`Codex lists none of the airlock hooks in ${hooksFile}, so none is trusted: run this setup again, or ${how}.`] };
    }
    const untrusted = r.hooks.filter((h) => h.trustStatus !== "trusted" && h.trustStatus !== "managed");
    const info = [`Codex hook trust (${r.trusted.length ? `written by codex app-server into ${userConfig}` : "already in place"}):`, ...r.hooks.map(hookLine)];
    if (untrusted.length) return { info, problem: [`Codex still reports ${untrusted.length} airlock hook(s) as not trusted: ${how}.`] };
    return { info };
  } catch (err) {
    return { info: [], problem: [`Could not record hook trust through \`${codex} app-server\`: ${errorMessage(err)}.`, `Codex skips untrusted hooks: ${how}, or run this setup again.`] };
  }
}
