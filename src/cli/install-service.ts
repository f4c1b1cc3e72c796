// `airlock install-service` / `airlock uninstall-service`: a systemd user unit or a launchd agent.
// AIRLOCK_SERVICE_DRYRUN=1 prints what would be done and changes nothing.
import { defineCommand } from "citty";
import { env } from "../config/env.ts";
import { currentServiceEnv, installService, uninstallService } from "../service/install.ts";
import { systemRunner } from "../service/runner.ts";

const runner = () => systemRunner({ dryRun: env.serviceDryRun });
const serviceEnv = () => currentServiceEnv({ xdgConfigHome: env.xdgConfigHome, home: env.userHome });

export const installServiceCommand = defineCommand({
  meta: {
    name: "install-service",
    description: "Run airlock as a user service (systemd on Linux, launchd on macOS); --store-file points it at a shared PostgreSQL store",
  },
  args: {
    "store-file": {
      type: "string",
      valueHint: "PATH",
      description:
        "A file, mode 0600, holding the shared store's postgres://... URL: the service runs the daemon with AIRLOCK_STORE_FILE=<its absolute path> (only the path is written into the unit or plist, never the URL). " +
        "Checked now. Kept when install-service runs again without it (as install.sh does at every upgrade); uninstall-service, then install-service, goes back to the local SQLite file.",
    },
  },
  async run({ args }) {
    process.exitCode = await installService(serviceEnv(), runner(), { storeFile: args["store-file"] });
  },
});

export const uninstallServiceCommand = defineCommand({
  meta: { name: "uninstall-service", description: "Stop and remove the airlock user service" },
  async run() {
    process.exitCode = await uninstallService(serviceEnv(), runner());
  },
});
