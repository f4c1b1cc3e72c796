// Renders the systemd user unit (pure). Logs go to the journal: `journalctl --user -u airlock`.

export const SYSTEMD_UNIT_NAME = "airlock.service";

/** Quotes one ExecStart word per systemd.syntax(7): "..." with \ and " escaped, % and $ doubled. */
export function systemdQuote(word: string): string {
  const escaped = word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$");
  return `"${escaped}"`;
}

/**
 * Quotes one Environment= assignment per systemd.exec(5): the whole "NAME=value" in "...", with
 * \ and " escaped (the value is C-unescaped), % doubled (specifiers are expanded) and control
 * characters as \xNN. Unlike ExecStart, $ is NOT doubled: Environment= does no variable
 * expansion, so "$$" would reach the daemon as two dollar signs.
 */
export function systemdEnvironment(name: string, value: string): string {
  const escaped = `${name}=${value}`
    .replace(/\\/g, "\\\\")
    .replace(/"/g, '\\"')
    .replace(/%/g, "%%")
    .replace(/[\x01-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return `"${escaped}"`;
}

export function renderSystemdUnit(o: { program: readonly string[]; description?: string; storeFile?: string | undefined }): string {
  // Only the file's path goes into the unit (often world-readable), never the URL it holds.
  const store = o.storeFile === undefined ? "" : `Environment=${systemdEnvironment("AIRLOCK_STORE_FILE", o.storeFile)}\n`;
  return `[Unit]
Description=${o.description ?? "Airlock: coordination daemon for AI coding agents (MCP on 127.0.0.1:27183)"}
Documentation=https://github.com/airlock-dev/airlock

[Service]
Type=simple
ExecStart=${[...o.program, "daemon"].map(systemdQuote).join(" ")}
Restart=on-failure
RestartSec=2
StandardOutput=journal
StandardError=journal
Environment=NO_COLOR=1
${store}
[Install]
WantedBy=default.target
`;
}
