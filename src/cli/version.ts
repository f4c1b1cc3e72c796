// `airlock version`: prints `airlock <semver>`.
import { defineCommand } from "citty";
import { VERSION } from "../version.ts";

export const versionCommand = defineCommand({
  meta: { name: "version", description: "Print the version" },
  run() {
    console.log(`airlock ${VERSION}`);
  },
});
