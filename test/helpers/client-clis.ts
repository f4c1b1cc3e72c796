// Where a test finds a client CLI: the folder .ci/run installs the ones the lockfile cannot hold
// into (.ci/client-clis.txt; CLIENT_CLIS_BIN names its .bin), else the tree's node_modules/.bin.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./daemon.ts";

/** The pinned specs of .ci/client-clis.txt, e.g. "cline@3.0.65". */
export const OUTSIDE_LOCKFILE: readonly string[] = readFileSync(join(ROOT, ".ci", "client-clis.txt"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l !== "" && !l.startsWith("#"));

export function clientBin(name: string): string {
  const dir = process.env.CLIENT_CLIS_BIN;
  if (dir && existsSync(join(dir, name))) return join(dir, name);
  return join(ROOT, "node_modules", ".bin", name);
}

/** How to get it, for a skip message: the pinned spec from .ci/client-clis.txt. */
export function howToInstall(pkg: string): string {
  const spec = OUTSIDE_LOCKFILE.find((s) => s.startsWith(`${pkg}@`)) ?? pkg;
  return `npm install --prefix DIR ${spec}, then CLIENT_CLIS_BIN=DIR/node_modules/.bin`;
}
