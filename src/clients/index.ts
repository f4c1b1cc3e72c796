// The clients `airlock setup` knows, in the order `airlock setup` lists them.
import { claudeCode } from "./claude-code.ts";
import { cline } from "./cline.ts";
import { codex } from "./codex.ts";
import { copilotCli } from "./copilot-cli.ts";
import { cursor } from "./cursor.ts";
import type { Client } from "./client.ts";
import { geminiCli } from "./gemini-cli.ts";
import { generic } from "./generic.ts";
import { kiro } from "./kiro.ts";
import { opencode } from "./opencode.ts";
import { vscode } from "./vscode.ts";
import { windsurf } from "./windsurf.ts";

export const CLIENTS: Client[] = [claudeCode, codex, cursor, geminiCli, vscode, windsurf, opencode, generic, copilotCli, cline, kiro];

export function findClient(id: string): Client | undefined {
  return CLIENTS.find((c) => c.id === id);
}
