// Renders the launchd agent property list (pure). Every value is XML-escaped.

export const LAUNCHD_LABEL = "com.airlock.daemon";
/** Labels an older Airlock used: v1 (agentpeek) and v2 (same label as ours). */
export const OLD_LAUNCHD_LABELS = ["com.agentpeek.daemon", "com.airlock.daemon"] as const;

export function xmlEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

export function renderLaunchdPlist(o: { program: readonly string[]; logPath: string; label?: string; storeFile?: string | undefined }): string {
  const str = (s: string) => `<string>${xmlEscape(s)}</string>`;
  // Only the file's path goes into the plist, never the URL it holds.
  const store = o.storeFile === undefined ? "" : `\t\t<key>AIRLOCK_STORE_FILE</key>\n\t\t${str(o.storeFile)}\n`;
  const args = [...o.program, "daemon"].map((a) => `\t\t${str(a)}`).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
\t<key>Label</key>
\t${str(o.label ?? LAUNCHD_LABEL)}
\t<key>ProgramArguments</key>
\t<array>
${args}
\t</array>
\t<key>RunAtLoad</key>
\t<true/>
\t<key>KeepAlive</key>
\t<dict>
\t\t<key>SuccessfulExit</key>
\t\t<false/>
\t</dict>
\t<key>ProcessType</key>
\t<string>Background</string>
\t<key>EnvironmentVariables</key>
\t<dict>
\t\t<key>NO_COLOR</key>
\t\t<string>1</string>
${store}\t</dict>
\t<key>StandardOutPath</key>
\t${str(o.logPath)}
\t<key>StandardErrorPath</key>
\t${str(o.logPath)}
</dict>
</plist>
`;
}
