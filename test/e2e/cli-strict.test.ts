// Strict arguments (SPEC §8), the real CLI against a real daemon: a mistyped flag, a flag
// without its value or an unknown command is refused with exit 2 and a "did you mean" before
// anything is done; --help fits 80 columns with no ANSI when piped; `log -f` follows; and the
// defects this replaced (setup --dryrun wrote files, claim --agnet claimed `bob`, run --pol
// queued in heavy) change nothing now.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliEnv, daemonCommand, ROOT, runCli, useDaemon } from "../helpers/daemon.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(30_000);

const d = useDaemon();
const env = cliEnv(d);

const scratch = () => mkdtempSync(join(tmpdir(), "airlock-strict-"));

function refused(r: { code: number; stderr: string; stdout: string }, flag: string, suggestion?: string) {
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain(flag);
  if (suggestion) expect(r.stderr).toContain(`did you mean ${suggestion}?`);
  expect(r.stderr).not.toMatch(/^\s+at /m);
}

describe("the reproduced defects are refused with exit 2, changing nothing", () => {
  test("setup cursor --dryrun suggests --dry-run and writes no file", async () => {
    const home = scratch();
    const r = await runCli(["setup", "cursor", "--dryrun"], { HOME: home, AIRLOCK_HOME: d.home });
    refused(r, "unknown flag --dryrun", "--dry-run");
    expect(existsSync(join(home, ".cursor"))).toBe(false);
    expect(readdirSync(home).filter((f) => !f.startsWith(".bun"))).toEqual([]);
  });

  test("claim --agnet bob 'typo/**' suggests --agent and creates no claim", async () => {
    const r = await runCli(["claim", "--room", "strict", "--agnet", "bob", "typo/**"], env);
    refused(r, "unknown flag --agnet", "--agent");
    expect(await d.call("list_path_claims", { room: "strict" })).toEqual([]);
  });

  test("run --pol gpu -- true suggests --pool and takes no slot", async () => {
    const dir = scratch();
    const r = await runCli(["run", "--pol", "gpu", "--", "touch", join(dir, "ran")], env);
    refused(r, "unknown flag --pol", "--pool");
    expect(existsSync(join(dir, "ran"))).toBe(false);
    const log = await d.call("watch_changes", { kinds: ["pool."] });
    expect(log.changes).toEqual([]);
  });
});

describe("every command is strict", () => {
  test("a string flag at the end, or followed by another flag or by --, is a missing value", async () => {
    refused(await runCli(["log", "--since"], env), "--since needs a value");
    refused(await runCli(["claim", "--agent", "--room", "x", "a/**"], env), "--agent needs a value");
    refused(await runCli(["run", "--pool", "--", "true"], env), "--pool needs a value");
    expect(await d.call("list_path_claims", {})).toEqual([]);
  });

  test("an unknown command suggests the nearest one; a word a command does not take is refused", async () => {
    refused(await runCli(["stauts"], env), "unknown command stauts", "status");
    refused(await runCli(["status", "extra"], env), '"extra"');
    refused(await runCli(["pool", "sett", "heavy"], env), "unknown command sett", "set");
    refused(await runCli(["release"], env), "missing TOKEN");
    refused(await runCli(["pool", "set", "heavy", "--reason", "r"], env), "missing --capacity");
  });

  test("bare flags run the daemon, and its flags are checked too", async () => {
    refused(await runCli(["--prot", "1234"], env), "unknown flag --prot", "--port");
  });

  test("words after -- belong to the child command and are never checked", async () => {
    const r = await runCli(["run", "--", "sh", "-c", 'printf "%s|" "$@"', "x", "--dryrun", "-h", "--agnet"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("--dryrun|-h|--agnet|");
  });

  test("a run flag after the command's own words says to put the command after --", async () => {
    const r = await runCli(["run", "sh", "-c", "true"], env);
    refused(r, "unknown flag -c");
    expect(r.stderr).toContain("after --");
  });

  test("declared spellings pass: --flag=value, boolean negation, aliases", async () => {
    expect((await runCli(["claims", "--room=nowhere"], env)).stdout).toBe("(no claims)\n");
    expect((await runCli(["run", "--no-pid-binding", "--", "true"], env)).code).toBe(0);
    refused(await runCli(["claims", "--no-room"], env), "unknown flag --no-room");
  });

  test("setup --remove without a client is an error, not the client listing", async () => {
    const r = await runCli(["setup", "--remove"], { HOME: scratch(), AIRLOCK_HOME: d.home });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("--remove needs a client");
  });
});

describe("the command of run and lock comes after --, and only that", () => {
  const touched = () => join(scratch(), "ran");
  // The journal's newest revision (nothing matches the filter), and what changed since.
  const head = async (): Promise<number> => (await d.call("watch_changes", { kinds: ["no-such-kind."] })).revision;
  const since = async (rev: number, kind: string) => (await d.call("watch_changes", { since_revision: rev, kinds: [kind] })).changes;

  test("lock -- CMD is a missing NAME: the command's first word never becomes the lock's name", async () => {
    const from = await head();
    const ran = touched();
    const r = await runCli(["lock", "--", "touch", ran], env);
    refused(r, "airlock lock: missing NAME");
    expect(existsSync(ran)).toBe(false);
    const echo = await runCli(["lock", "--", "echo", "hi", "there"], env);
    refused(echo, "missing NAME");
    expect(await since(from, "lock.")).toEqual([]);
  });

  test("words before -- beyond the declared arguments are refused, named, with the usage", async () => {
    const from = await head();
    const ran = touched();
    const r = await runCli(["run", "echo", "a", "--", "touch", ran], env);
    refused(r, '"echo" "a"');
    expect(r.stderr).toContain("airlock run [flags] -- CMD...");
    const l = await runCli(["lock", "L1", "echo", "a", "--", "touch", ran], env);
    refused(l, '"echo" "a"');
    expect(l.stderr).not.toContain('"L1"');
    expect(l.stderr).toContain("airlock lock [flags] NAME -- CMD...");
    expect(existsSync(ran)).toBe(false);
    expect(await since(from, "lock.")).toEqual([]);
    expect(await since(from, "pool.")).toEqual([]);
  });

  test("no command at all is a missing CMD for both, holding nothing", async () => {
    const from = await head();
    for (const args of [["run"], ["run", "--"], ["run", "--pool", "heavy"], ["lock", "L1"], ["lock", "L1", "--"]]) refused(await runCli(args, env), "missing CMD");
    expect(await since(from, "lock.")).toEqual([]);
    expect(await since(from, "pool.")).toEqual([]);
  });

  test("without --, the words after the declared arguments are the command (as documented)", async () => {
    const from = await head();
    expect(await runCli(["run", "echo", "a", "b"], env)).toMatchObject({ code: 0, stdout: "a b\n" });
    expect(await runCli(["lock", "L1", "echo", "a", "b"], env)).toMatchObject({ code: 0, stdout: "a b\n" });
    expect(await runCli(["lock", "L1", "--", "echo", "-n", "x"], env)).toMatchObject({ code: 0, stdout: "x" });
    const names = (await since(from, "lock.")).map((c: { resource?: string }) => c.resource);
    expect(new Set(names)).toEqual(new Set(["L1"]));
  });
});

describe("help", () => {
  const commands = [[], ["run"], ["lock"], ["setup"], ["pool", "set"], ["log"], ["daemon"], ["claim"], ["install-service"]];
  for (const c of commands) {
    test(`airlock ${c.join(" ")} --help fits 80 columns with no ANSI when piped`, async () => {
      const r = await runCli([...c, "--help"], { ...env, NO_COLOR: undefined, TERM: "xterm-256color", FORCE_COLOR: "1" });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage:");
      expect(r.stdout).not.toContain("\x1b");
      for (const line of r.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    });
  }

  test("help is shown even when the rest of the line has a typo, and `airlock help X` is `airlock X --help`", async () => {
    const r = await runCli(["claim", "--agnet", "x", "--help"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--agent");
    expect((await runCli(["help", "pool", "set"], env)).stdout).toContain("--capacity");
  });
});

describe("unknown tokens and pools", () => {
  test("release and unclaim of a token never issued say unknown and exit 1; one released before says already released", async () => {
    for (const [verb, what] of [["release", "slot_token"], ["unclaim", "claim_token"]]) {
      for (const token of ["deadbeef", "0123456789abcdef0123456789abcdef"]) {
        const r = await runCli([verb!, token], env);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`unknown ${what} "${token}"`);
      }
    }
    const claim = await d.call("claim_paths", { agent_id: "me", room: "tok", paths: ["a/**"] });
    expect(await runCli(["unclaim", claim.claim_token], env)).toMatchObject({ code: 0, stdout: "released\n" });
    expect(await runCli(["unclaim", claim.claim_token], env)).toMatchObject({ code: 0, stdout: "already released\n" });
    const slot = await d.call("acquire_slot", { agent_id: "me", ttl_seconds: 60 });
    expect(await runCli(["release", slot.slot_token], env)).toMatchObject({ code: 0, stdout: "released\n" });
    expect(await runCli(["release", slot.slot_token], env)).toMatchObject({ code: 0, stdout: "already released\n" });
    // A queued request withdrawn by its wake_token is known too.
    const held = await d.call("acquire_slot", { agent_id: "holder", ttl_seconds: 60 });
    const queued = await d.call("acquire_slot", { agent_id: "me", ttl_seconds: 60 });
    expect(await runCli(["release", queued.wake_token], env)).toMatchObject({ code: 0, stdout: "released\n" });
    expect(await runCli(["release", queued.wake_token], env)).toMatchObject({ code: 0, stdout: "already released\n" });
    await d.call("release_slot", { slot_token: held.slot_token });
  });

  test("run --pool gpu and wait --pool gpu fail at once with `unknown pool: gpu` and how to create it", async () => {
    for (const args of [["run", "--pool", "gpu", "--", "true"], ["wait", "--pool", "gpu"]]) {
      const r = await runCli(args, env, 10_000);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("unknown pool: gpu");
      expect(r.stderr).toContain("airlock pool set gpu --capacity N");
    }
  });
});

describe("log", () => {
  test("log -f follows, and the human form has clock times and durations, never epoch milliseconds", async () => {
    // An earlier change, which log prints first (it reads from revision 0): once it is on screen,
    // log is up and reading, and whatever comes next can only reach it by following.
    const lock = await d.call("lock_resource", { name: "followed", agent_id: "me", ttl_seconds: 60 });
    const proc = Bun.spawn([...daemonCommand(), "log", "-f", "--resource", "followed"], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
    let text = "";
    const pumped = (async () => {
      const dec = new TextDecoder();
      for await (const chunk of proc.stdout) text += dec.decode(chunk);
    })();
    try {
      await until("log to print the change made before it started", () => /lock\.\S+ +followed/.test(text), 15_000);
      expect(text).not.toContain("lock.renewed");
      await d.call("renew_lock", { name: "followed", lock_token: lock.lock_token, ttl_seconds: 120 });
      await until("log -f to print the change made after its first line", () => text.includes("lock.renewed"), 10_000);
      expect(proc.exitCode).toBeNull(); // still following
      const line = text.split("\n").find((l) => l.includes("lock.renewed"))!;
      // A time on another day than today carries its date (the renewal ran near midnight).
      expect(line).toMatch(/^#\d+ {2}(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d {2}lock\.renewed/);
      expect(line).toMatch(/expires=(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d/);
      expect(line).not.toMatch(/\d{13}/);
    } finally {
      await d.call("unlock_resource", { name: "followed", lock_token: lock.lock_token });
      proc.kill();
      await proc.exited;
      await pumped;
    }
  });
});
