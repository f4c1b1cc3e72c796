// The clients `airlock setup` knows, in the order `airlock setup` lists them.
import { claudeCode } from "./claude-code.ts";
import { cursor } from "./cursor.ts";
import type { Client } from "./client.ts";
import { generic } from "./generic.ts";

export const CLIENTS: Client[] = [claudeCode, generic, cursor];

export function findClient(id: string): Client | undefined {
  return CLIENTS.find((c) => c.id === id);
}
