// The CLI on a shared store: `airlock status` reads the team's PostgreSQL when this machine's
// daemon is down, and `airlock doctor` checks the store the daemon uses (reachable, at this
// binary's schema, how many daemons are live), never printing the password.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type DaemonProcess, runCli, startDaemon, tempHome } from "../helpers/daemon.ts";
import { describePg, freshDatabase } from "../helpers/pg.ts";
import { freePort } from "../helpers/until.ts";

setDefaultTimeout(30_000);

/** The database URL with a password in it (the test server trusts any): it must never be shown. */
const withPassword = (url: string) => url.replace("postgres://postgres@", "postgres://postgres:cli-s3cret@");

describePg("the CLI on a shared store", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let d: DaemonProcess;
  beforeAll(async () => {
    db = await freshDatabase();
    d = await startDaemon({ db: withPassword(db.url) });
    await d.call("lock_resource", { name: "team-lock", agent_id: "ghost", ttl_seconds: 600 });
    await d.call("increment_counter", { name: "team-counter", by: 5 });
  });
  afterAll(async () => {
    await d.kill();
    await db.drop();
  });

  test("doctor reports the store the daemon uses: reachable, at this schema, one live daemon; no password", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "airlock-store-")), "url");
    writeFileSync(file, `${withPassword(db.url)}\n`, { mode: 0o600 });
    const r = await runCli(["doctor"], { AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), HOME: dirname(d.home), AIRLOCK_STORE_FILE: file });
    expect(r.stdout).toMatch(/ok +shared store postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/airlock_t_\w+ answers, at this airlock's schema; 1 daemon\(s\) with a live heartbeat/);
    expect(r.stdout + r.stderr).not.toContain("cli-s3cret");
  });

  test("doctor says what is wrong with an unreachable store, without its password", async () => {
    const url = `postgres://postgres:cli-s3cret@127.0.0.1:${freePort()}/nowhere`;
    const r = await runCli(["doctor"], { AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), HOME: dirname(d.home), AIRLOCK_STORE: url });
    expect(r.stdout).toMatch(/FAIL +cannot open store postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/nowhere/);
    expect(r.stdout).toContain("check the URL");
    expect(r.stdout + r.stderr).not.toContain("cli-s3cret");
    expect(r.code).toBe(1);
  });

  test("status says the store is shared and how many daemons are live; on SQLite it says nothing of the kind", async () => {
    const json = JSON.parse((await runCli(["status", "--json"], { AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port) })).stdout);
    expect(json).toMatchObject({ source: "daemon", daemons: 1 });
    const human = await runCli(["status"], { AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port) });
    expect(human.stdout).toContain("(a shared store: 1 daemon live)");
    const local = await startDaemon();
    try {
      const alone = JSON.parse((await runCli(["status", "--json"], { AIRLOCK_HOME: local.home, AIRLOCK_PORT: String(local.port) })).stdout);
      expect(alone.source).toBe("daemon");
      expect("daemons" in alone).toBe(false);
    } finally {
      await local.kill();
    }
  });

  test("with this machine's daemon down, status reads the shared store (--store, or AIRLOCK_STORE_FILE)", async () => {
    // A home of its own and a port nobody answers on: the local daemon is "down".
    const offline = { AIRLOCK_HOME: tempHome(), AIRLOCK_PORT: String(freePort()) };
    const json = await runCli(["status", "--json", "--store", withPassword(db.url)], offline);
    expect(json.code).toBe(0);
    const s = JSON.parse(json.stdout);
    expect(s.source).toBe("database");
    expect(s.locks).toEqual([expect.objectContaining({ name: "team-lock", agent_id: "ghost" })]);
    expect(s.counters).toEqual([{ name: "team-counter", value: 5 }]);

    const file = join(mkdtempSync(join(tmpdir(), "airlock-store-")), "url");
    writeFileSync(file, withPassword(db.url), { mode: 0o600 });
    const human = await runCli(["status"], { ...offline, AIRLOCK_STORE_FILE: file });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("daemon not running");
    expect(human.stdout).toContain("team-lock");
    expect(human.stdout).toMatch(/postgres:\/\/postgres:\*\*\*@127\.0\.0\.1/);
    expect(human.stdout + human.stderr).not.toContain("cli-s3cret");

    // A store file others can read is refused, as the daemon refuses it.
    chmodSync(file, 0o644);
    const refused = await runCli(["status"], { ...offline, AIRLOCK_STORE_FILE: file });
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain("is readable by other users; chmod 600 it");
  });

  test("status --store on a database without Airlock's schema says so, and changes nothing", async () => {
    const empty = await freshDatabase();
    try {
      const r = await runCli(["status", "--store", empty.url], { AIRLOCK_HOME: tempHome(), AIRLOCK_PORT: String(freePort()) });
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).toContain("no Airlock state in");
    } finally {
      await empty.drop();
    }
  });
});
