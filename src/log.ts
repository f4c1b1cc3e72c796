// The one consola instance. Every module logs through createLog(tag) so that level and
// colour (NO_COLOR) are decided in one place.
import { createConsola, type ConsolaInstance } from "consola";
import { env } from "./config/env.ts";

const LEVELS: Record<string, number> = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 };

export const log: ConsolaInstance = createConsola({
  level: LEVELS[env.logLevel] ?? 3,
  formatOptions: { colors: !env.noColor, date: false },
});

export function createLog(tag: string): ConsolaInstance {
  return log.withTag(tag);
}
