// The only reader of process.env: every setting the environment can give, parsed once.
// Tests and the CLI pass explicit options instead of mutating the environment.

function str(name: string): string | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
}

export const env = {
  get home(): string | undefined {
    return str("AIRLOCK_HOME");
  },
  get userHome(): string | undefined {
    return str("HOME") ?? str("USERPROFILE");
  },
  get port(): string | undefined {
    return str("AIRLOCK_PORT");
  },
  get host(): string | undefined {
    return str("AIRLOCK_HOST");
  },
  get db(): string | undefined {
    return str("AIRLOCK_DB");
  },
  /** A PostgreSQL URL: the state lives in a database shared by many daemons. */
  get store(): string | undefined {
    return str("AIRLOCK_STORE");
  },
  /** A file (mode 0600) holding that URL, so the password is in neither the environment nor ps. */
  get storeFile(): string | undefined {
    return str("AIRLOCK_STORE_FILE");
  },
  get durability(): string | undefined {
    return str("AIRLOCK_DURABILITY");
  },
  /** Days of journal history kept (default 7). */
  get journalDays(): string | undefined {
    return str("AIRLOCK_JOURNAL_DAYS");
  },
  /** A shared store: seconds a machine's daemons may all be gone before its process-bound slots are released (default 600). */
  get hostGoneSeconds(): string | undefined {
    return str("AIRLOCK_HOST_GONE_SECONDS");
  },
  /** At most this many journal entries kept (default 100000). */
  get journalMax(): string | undefined {
    return str("AIRLOCK_JOURNAL_MAX");
  },
  /**
   * AIRLOCK_JOURNAL=off: a bench/diagnostic switch, not a user setting. The daemon then records
   * only pool.* and path.* (whose revisions are fences), so the benchmark can measure what the
   * other records cost; the change feed misses everything else.
   */
  get journalOff(): boolean {
    return str("AIRLOCK_JOURNAL")?.toLowerCase() === "off";
  },
  /** AIRLOCK_TRACE=FILE: a bench/diagnostic switch (src/trace.ts): timing marks written to FILE at exit. */
  get traceFile(): string | undefined {
    return str("AIRLOCK_TRACE");
  },
  /** The hooks' answer to another agent's uncommitted edit of a file: advisory (default) or strict (src/clients/hooks/worktree.ts). */
  get editPolicy(): string | undefined {
    return str("AIRLOCK_EDIT_POLICY");
  },
  get token(): string | undefined {
    return str("AIRLOCK_TOKEN");
  },
  /** The daemon's Unix socket (where it listens; where the CLI connects when set), or "off". */
  get socket(): string | undefined {
    return str("AIRLOCK_SOCKET");
  },
  /** Tags what a sandboxed agent holds (`airlock run`/`wait` reasons and default agent ids). */
  get labelPrefix(): string | undefined {
    const v = str("AIRLOCK_LABEL_PREFIX")?.trim();
    return v === "" ? undefined : v;
  },
  get logLevel(): string {
    return str("AIRLOCK_LOG") ?? "info";
  },
  get noColor(): boolean {
    return str("NO_COLOR") !== undefined || !process.stdout.isTTY;
  },
  get serviceDryRun(): boolean {
    const v = str("AIRLOCK_SERVICE_DRYRUN");
    return v !== undefined && v !== "0" && v.toLowerCase() !== "false";
  },
  get xdgConfigHome(): string | undefined {
    return str("XDG_CONFIG_HOME");
  },
  /** Claude Code's own: where it keeps .claude.json, settings.json and CLAUDE.md instead of ~. */
  get claudeConfigDir(): string | undefined {
    return str("CLAUDE_CONFIG_DIR");
  },
  /** Codex's own: its home instead of ~/.codex. */
  get codexHome(): string | undefined {
    return str("CODEX_HOME");
  },
  /** Copilot CLI's own: its config and state instead of ~/.copilot. */
  get copilotHome(): string | undefined {
    return str("COPILOT_HOME");
  },
};
