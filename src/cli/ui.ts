// `airlock ui`: opens the web dashboard. It asks the daemon for a one-time code (over the same
// guarded endpoint as every call, so with the bearer token when one is set) and opens
// /ui/login?code=... in the browser; the daemon swaps the code for an HttpOnly session cookie.
// The token itself never reaches the browser.
import { defineCommand } from "citty";
import { daemonUrl, PORT_ARG, rpcAt } from "./client.ts";
import { duration } from "./format.ts";

/** The command that opens a URL in the desktop's browser, or null where there is none. */
export function opener(platform: NodeJS.Platform = process.platform): string[] | null {
  if (platform === "darwin") return ["open"];
  if (platform === "win32") return ["cmd", "/c", "start", ""];
  return Bun.which("xdg-open") ? ["xdg-open"] : null;
}

export const uiCommand = defineCommand({
  meta: { name: "ui", description: "Open the web dashboard in your browser (a one-time login link; no token in the page)" },
  args: {
    print: { type: "boolean", description: "Print the one-time link instead of opening a browser (it works once, within a minute)" },
    port: PORT_ARG,
  },
  async run({ args }) {
    const { result, endpoint } = await rpcAt("airlock/ui-code", {}, { port: args.port }, 5000);
    const r = result as { path: string; expires_in_seconds: number };
    // The browser needs TCP: the URL of the daemon that answered (when that was its socket, the URL the lookup knows).
    const url = endpoint.unix ? daemonUrl({ port: args.port }) : endpoint.url;
    const link = `${url}${r.path}`;
    const open = args.print ? null : opener();
    if (open) {
      const p = Bun.spawn([...open, link], { stdout: "ignore", stderr: "ignore", stdin: "ignore" });
      if ((await p.exited) === 0) {
        console.log(`Opened the dashboard: ${url}/ui`);
        return;
      }
    }
    console.log(`Open this link within ${duration(r.expires_in_seconds)} (it works once):\n${link}`);
  },
});
