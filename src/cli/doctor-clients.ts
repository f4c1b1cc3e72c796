// `airlock doctor`'s checks of the agent clients set up on this machine (config present, hook
// command resolves and reaches this daemon, token readable, permission rule, Codex trust). A stub
// for now: the checks land here, each failed one with its fix. The Check type lives here, below
// doctor.ts (which re-exports it), so neither file imports the other's module.

/** One line of doctor's report: ok, a warning, or a failure (false) with what to do about it. */
export type Check = { ok: boolean | "warn"; what: string; fix?: string };

/** The checks of every installed client, in the order doctor prints them. */
export async function clientChecks(): Promise<Check[]> {
  return [];
}
