// `airlock watch`: status, redrawn every interval until Ctrl-C.
import { defineCommand } from "citty";
import { errorMessage } from "../errors.ts";
import { clock, renderStatus } from "./format.ts";
import { loadSnapshot } from "./status.ts";
import { PORT_ARG } from "./client.ts";

export const watchCommand = defineCommand({
  meta: { name: "watch", description: "Live status, refreshed every second" },
  args: {
    interval: { type: "string", description: "Seconds between refreshes (default 1)" },
    port: PORT_ARG,
  },
  async run({ args }) {
    const everyMs = Math.max(0.2, Number(args.interval ?? 1) || 1) * 1000;
    for (;;) {
      let screen: string;
      try {
        const { snapshot, where } = await loadSnapshot(args.port);
        screen = renderStatus(snapshot, where);
      } catch (err) {
        screen = errorMessage(err);
      }
      process.stdout.write(`\x1b[2J\x1b[H${screen}\n${clock(Date.now())}  (Ctrl-C to stop)\n`);
      await Bun.sleep(everyMs);
    }
  },
});
