// Renders the systemd user unit (pure). Logs go to the journal: `journalctl --user -u airlock`.

export const SYSTEMD_UNIT_NAME = "airlock.service";

/** Quotes one ExecStart word per systemd.syntax(7): "..." with \ and " escaped, % and $ doubled. */
export function systemdQuote(word: string): string {
  const escaped = word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$");
  return `"${escaped}"`;
}

export function renderSystemdUnit(o: { program: readonly string[]; description?: string }): string {
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

[Install]
WantedBy=default.target
`;
}
