// The clients `airlock setup` knows, in the order `airlock setup` lists them.
import { amp } from "./amp.ts";
import { claudeCode } from "./claude-code.ts";
import { cline } from "./cline.ts";
import type { Client } from "./client.ts";
import { codex } from "./codex.ts";
import { continueClient } from "./continue.ts";
import { copilotCli } from "./copilot-cli.ts";
import { cursor } from "./cursor.ts";
import { geminiCli } from "./gemini-cli.ts";
import { generic } from "./generic.ts";
import { goose } from "./goose.ts";
import { junie } from "./junie.ts";
import { kiro } from "./kiro.ts";
import { opencode } from "./opencode.ts";
import { rooCode } from "./roo-code.ts";
import { vscode } from "./vscode.ts";
import { warp } from "./warp.ts";
import { windsurf } from "./windsurf.ts";
import { zed } from "./zed.ts";

export const CLIENTS: Client[] = [
  claudeCode,
  codex,
  cursor,
  geminiCli,
  vscode,
  windsurf,
  opencode,
  copilotCli,
  cline,
  kiro,
  rooCode,
  goose,
  zed,
  continueClient,
  amp,
  warp,
  junie,
  generic,
];

export function findClient(id: string): Client | undefined {
  return CLIENTS.find((c) => c.id === id);
}
