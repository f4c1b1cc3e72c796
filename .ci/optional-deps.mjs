// The optional packages of the lockfile that this machine needs and `npm ci` left out. npm skips
// an optional dependency it could not fetch without failing: the agent CLIs' native builds
// (@anthropic-ai/claude-code-linux-x64, @openai/codex-linux-x64, ...) are such packages, each
// tens of megabytes, and a registry hiccup while fetching one once left the live sessions with a
// CLI that could not start (2026-12-05). Prints the missing paths, one a line, and exits 1 when
// there are any; exits 0 quietly when none. Plain Node: bun itself is such a package.
//   node .ci/optional-deps.mjs
import { existsSync, readFileSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const libc = process.platform !== "linux" ? undefined : process.report?.getReport?.().header?.glibcVersionRuntime ? "glibc" : "musl";

/** Whether an os/cpu/libc list of package.json (absent: any; "!x": all but x) admits v. */
function admits(list, v) {
  if (!Array.isArray(list) || list.length === 0) return true;
  if (v === undefined) return false;
  if (list.includes(`!${v}`)) return false;
  const wanted = list.filter((x) => !x.startsWith("!"));
  return wanted.length === 0 || wanted.includes(v);
}

const missing = Object.entries(lock.packages ?? {})
  .filter(([path, p]) => path !== "" && p.optional === true && admits(p.os, process.platform) && admits(p.cpu, process.arch) && admits(p.libc, libc))
  .map(([path]) => path)
  .filter((path) => !existsSync(path));
if (missing.length > 0) {
  console.log(missing.join("\n"));
  process.exit(1);
}
