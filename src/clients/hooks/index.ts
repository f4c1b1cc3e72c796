// The catalogue of clients `airlock hook <client> <event>` speaks to, in the order they matter.
import { claudeCode } from "./claude-code.ts";
import { cline } from "./cline.ts";
import { codex } from "./codex.ts";
import { copilotCli } from "./copilot-cli.ts";
import { cursor } from "./cursor.ts";
import { geminiCli } from "./gemini-cli.ts";
import { kiro } from "./kiro.ts";
import { opencode } from "./opencode.ts";
import type { HookAdapter } from "./shared.ts";

export const HOOK_ADAPTERS: readonly HookAdapter[] = [claudeCode, codex, cursor, geminiCli, opencode, copilotCli, cline, kiro];

export function hookAdapter(client: string): HookAdapter | undefined {
  return HOOK_ADAPTERS.find((a) => a.client === client);
}
