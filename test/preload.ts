// Every test run gets a private temporary home: no test ever touches the user's ~/.airlock,
// and the user's own AIRLOCK_* settings never leak into a test.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const home = mkdtempSync(join(tmpdir(), "airlock-test-"));
const testLog = process.env.AIRLOCK_TEST_LOG; // read before the AIRLOCK_* variables are cleared
// AIRLOCK_BIN and AIRLOCK_TEST_* choose what the tests run against (the binary, a PostgreSQL
// server); they are not settings of the daemon, and stay.
for (const k of Object.keys(process.env)) if (k.startsWith("AIRLOCK_") && k !== "AIRLOCK_BIN" && !k.startsWith("AIRLOCK_TEST_")) delete process.env[k];
// The clients' own relocations would send setup tests into the user's real config folders.
for (const k of ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME"]) delete process.env[k];
process.env.HOME = home;
process.env.AIRLOCK_HOME = join(home, ".airlock");
process.env.AIRLOCK_LOG = testLog ?? "warn";
process.env.NO_COLOR = "1";

// A hook registered in the preload runs once, after every test file (exit handlers do not run
// under bun test, so this is where the temporary home is removed).
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
});
