// `airlock install-service` / `airlock uninstall-service`: a systemd user unit or a launchd agent.
// AIRLOCK_SERVICE_DRYRUN=1 prints what would be done and changes nothing.
import { defineCommand } from "citty";
import { env } from "../config/env.ts";
import { currentServiceEnv, installService, uninstallService } from "../service/install.ts";
import { systemRunner } from "../service/runner.ts";

const runner = () => systemRunner({ dryRun: env.serviceDryRun });
const serviceEnv = () => currentServiceEnv({ xdgConfigHome: env.xdgConfigHome, home: env.userHome });

export const installServiceCommand = defineCommand({
  meta: { name: "install-service", description: "Run airlock as a user service (systemd on Linux, launchd on macOS)" },
  async run() {
    process.exitCode = await installService(serviceEnv(), runner());
  },
});

export const uninstallServiceCommand = defineCommand({
  meta: { name: "uninstall-service", description: "Stop and remove the airlock user service" },
  async run() {
    process.exitCode = await uninstallService(serviceEnv(), runner());
  },
});
