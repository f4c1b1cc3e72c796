// `airlock status` shows path claims grouped by room, from the live daemon and, when the daemon
// is down, from the database; never with their claim tokens.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { runCli, sqliteOnly, tempHome, useDaemon, useDaemonStarter } from "../helpers/daemon.ts";

setDefaultTimeout(20_000);

const d = useDaemon();
const start = useDaemonStarter();
const env = () => ({ AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port) });

describe("status shows path claims by room", () => {
  test("status --json and the human output list a claim under its room, without its token", async () => {
    const c = await d.call("claim_paths", { agent_id: "claude", paths: ["src/api/**"], room: "/repo/one", reason: "api rewrite" });
    expect(c.granted).toBe(true);
    const o = await d.call("claim_paths", { agent_id: "codex", paths: ["src/web/**", "docs/*.md"], room: "two" });
    expect(o.granted).toBe(true);
    try {
      const json = await runCli(["status", "--json"], env());
      expect(json.code).toBe(0);
      expect(json.stdout).not.toContain(c.claim_token);
      expect(json.stdout).not.toContain(o.claim_token);
      const s = JSON.parse(json.stdout);
      expect(s.source).toBe("daemon");
      expect(s.claims).toEqual([
        { room: "/repo/one", claims: [{ agent_id: "claude", paths: ["src/api/**"], reason: "api rewrite", fence: c.fence, expires_in_seconds: expect.any(Number) }] },
        { room: "two", claims: [{ agent_id: "codex", paths: ["src/web/**", "docs/*.md"], fence: o.fence, expires_in_seconds: expect.any(Number) }] },
      ]);
      expect(s.claims[0].claims[0].expires_in_seconds).toBeGreaterThan(800);

      const human = await runCli(["status"], env());
      expect(human.code).toBe(0);
      expect(human.stdout).not.toContain(c.claim_token);
      const lines = human.stdout.split("\n");
      const at = lines.findIndex((l) => l.startsWith("CLAIMS (2)"));
      expect(at).toBeGreaterThanOrEqual(0);
      expect(lines[at + 1]).toBe("  room /repo/one");
      expect(lines[at + 2]).toMatch(/^ {4}claude {2}src\/api\/\*\* {2}\(api rewrite\) {2}expires in 1[45]m( \d\d?s)?, fence \d+$/);
      expect(lines[at + 3]).toBe("  room two");
      expect(lines[at + 4]).toMatch(/^ {4}codex {2}src\/web\/\*\* docs\/\*\.md {2}expires in /);
    } finally {
      await d.call("release_paths", { claim_token: c.claim_token });
      await d.call("release_paths", { claim_token: o.claim_token });
    }
    const after = JSON.parse((await runCli(["status", "--json"], env())).stdout);
    expect(after.claims).toEqual([]);
    expect((await runCli(["status"], env())).stdout).toContain("CLAIMS (0)\n  (none)");
  });

  sqliteOnly("with the daemon killed, status --db reads the live claims from the database, and not the lapsed ones", async () => {
    const own = await start();
    const kept = await own.call("claim_paths", { agent_id: "ghost", paths: ["src/api/**"], room: "repo", reason: "left behind", ttl_seconds: 600 });
    expect(kept.granted).toBe(true);
    const lapsing = await own.call("claim_paths", { agent_id: "brief", paths: ["src/web/**"], room: "repo", ttl_seconds: 1 });
    expect(lapsing.granted).toBe(true);
    await own.kill("SIGKILL");
    await Bun.sleep(1100); // the short claim's row stays (no daemon to delete it) but is past its expiry

    // A home of its own: only --db says where the database is.
    const offline = { AIRLOCK_HOME: tempHome(), AIRLOCK_PORT: String(own.port) };
    const json = await runCli(["status", "--json", "--db", own.db], offline);
    expect(json.code).toBe(0);
    expect(json.stdout).not.toContain(kept.claim_token);
    const s = JSON.parse(json.stdout);
    expect(s.source).toBe("database");
    expect(s.claims).toEqual([
      { room: "repo", claims: [{ agent_id: "ghost", paths: ["src/api/**"], reason: "left behind", fence: kept.fence, expires_in_seconds: expect.any(Number) }] },
    ]);

    const human = await runCli(["status", "--db", own.db], offline);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("daemon not running");
    expect(human.stdout).toContain("CLAIMS (1)\n  room repo\n    ghost  src/api/**  (left behind)  expires in ");
    expect(human.stdout.split("POOLS")[0]).not.toContain("brief"); // the journal below still says it was granted
  });
});
