// The clients `airlock setup` knows, in the order `airlock setup` lists them.
import { claudeCode } from "./claude-code.ts";
import { codex } from "./codex.ts";
import { cursor } from "./cursor.ts";
import type { Client } from "./client.ts";
import { geminiCli } from "./gemini-cli.ts";
import { generic } from "./generic.ts";
import { opencode } from "./opencode.ts";
import { vscode } from "./vscode.ts";
import { windsurf } from "./windsurf.ts";
import { rooCode } from "./roo-code.ts";
import { goose } from "./goose.ts";
import { zed } from "./zed.ts";
import { continueClient } from "./continue.ts";
import { amp } from "./amp.ts";
import { warp } from "./warp.ts";

export const CLIENTS: Client[] = [claudeCode, codex, cursor, geminiCli, vscode, windsurf, opencode, rooCode, goose, zed, continueClient, amp, warp, generic];

export function findClient(id: string): Client | undefined {
  return CLIENTS.find((c) => c.id === id);
}
