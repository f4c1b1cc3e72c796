// The real Claude Code CLI (npm @anthropic-ai/claude-code 2.1.332), interactive, in a terminal,
// against the real daemon: which protocol era it speaks to us, and a long wait for a slot that
// becomes a task (the MCP tasks extension), runs in the background while the session goes on, and
// wakes the model when the slot is granted.
//
// How it is driven, and why: a user runs `claude` with no flags, in a terminal. Interactive
// sessions declare the tasks extension by default; `claude -p` never does, and a `-p
// --input-format stream-json` session does only with CLAUDE_AUTO_BACKGROUND_TASKS=1 and a feature
// flag seeded into ~/.claude.json, which no user sets (shared reference §7). So this file runs the
// plain interactive `claude` in a pseudo-terminal (test/helpers/pty-session.ts, python3's pty) and
// types into it what a user types: the prompt, and the answer to the workspace-trust dialog
// ("Yes, I trust this folder"). Before it, the world is the user's (startWorld, `airlock setup
// claude-code`); the test writes only what a Claude Code user already had: onboarding done, and
// the "use this API key" answer Claude Code saves when it finds ANTHROPIC_API_KEY (its dialog is
// not what is under test). The model is the scripted server (test/helpers/model-server.ts).
//
// The story: agent-h holds the one slot of pool `heavy`. The model calls acquire_slot with
// wait_seconds 1800; the daemon answers a task, Claude Code moves the call to the background and
// the model goes on (a Read); agent-h releases; the daemon grants the slot to the task; Claude Code
// polls tasks/get, sees it completed, and starts a new model turn with a <task-notification>
// holding the grant; the model releases the slot with the token it was given.
//
// Which era, from the daemon's side: airlock/status's `eras` counts requests per era, and
// `eras_by_client` per User-Agent. The session's hooks (Airlock's own CLI) and the test's status
// reads speak 2025; Claude Code's own requests (its User-Agent `claude-code/<version> (cli)`) must
// all be modern: its handshake before the prompt (server/discover and tools/list), the tools/call
// of acquire_slot, and tasks/get until the grant.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/daemon.ts";
import { agentIdIn, CLAUDE_BIN, liveTest, type LiveWorld, type RunResult, startWorld } from "../helpers/live-session.ts";
import { type ModelRequest, transcript, type Turn } from "../helpers/model-server.ts";
import { type PtySession, squeeze, startInPty } from "../helpers/pty-session.ts";
import { until } from "../helpers/until.ts";

const PROMPT = "LIVE-TASKS: run the test suite once a slot is free; keep working meanwhile.";
const API_KEY = "sk-ant-live-test";
const MODERN = "2026-07-28";
const OUT = process.env.AIRLOCK_ARTIFACTS ?? join(ROOT, ".ci/out");
/** The whole session: startup, five model requests and a grant (about 8 s here); a hung one is killed. */
const SESSION_TIMEOUT_MS = 50_000;
/** Each step the test waits for on the screen or in the daemon (seconds, on a loaded 2-core machine). */
const STEP_MS = 20_000;

function gate(): typeof test {
  if (!Bun.which("python3")) {
    const why = "python3 is missing (the terminal the interactive client runs in is its pty module)";
    if (process.env.CI === "true") {
      test("python3 is installed", () => {
        throw new Error(why);
      });
    } else console.log(`skipping the live Claude Code tasks session: ${why}`);
    return test.skip;
  }
  return liveTest(CLAUDE_BIN, "Claude Code CLI");
}
const live = gate();

/**
 * The folder is new to Claude Code: it asks whether to trust it ("No, exit" preselected) and the
 * user picks "Yes, I trust this folder". Typed like a person would: look at the dialog, move to
 * Yes, press Enter, look again (the dialog can be drawn afresh while Claude Code starts, and a key
 * that arrives before it is drawn is lost), until the session's banner replaces it.
 */
async function trustTheFolder(pty: PtySession): Promise<void> {
  const YES = squeeze("❯ Yes, I trust this folder");
  const NO = squeeze("❯ No, exit");
  await pty.waitFor("Yes, I trust this folder", STEP_MS);
  const deadline = performance.now() + STEP_MS;
  while (performance.now() < deadline) {
    const screen = pty.screen();
    const dialogAt = screen.lastIndexOf(squeeze("Yes, I trust this folder"));
    if (screen.indexOf(squeeze("Claude Code v"), dialogAt) > dialogAt) return;
    if (pty.exited()) throw new Error(`Claude Code exited at the trust dialog; screen ends: ${screen.slice(-400)}`);
    pty.type(screen.lastIndexOf(NO) > screen.lastIndexOf(YES) ? "\x1b[B" : "\r");
    await Bun.sleep(700); // a person's pace: the TUI draws the answer to each key before the next
  }
  throw new Error(`the trust dialog did not go away; screen ends: ${pty.screen().slice(-400)}`);
}

type Eras = Record<string, number>;
interface Snap {
  at: string;
  eras: Eras;
  byClient: Record<string, Eras>;
  heavy: any;
}

describe("Claude Code, interactive in a terminal: the 2026-07-28 era and a slot wait as a task", () => {
  const s = {
    snaps: [] as Snap[],
    results: {} as Record<string, any>,
    run: undefined as RunResult | undefined,
    setupOut: undefined as RunResult | undefined,
    error: undefined as string | undefined,
  };
  let w: LiveWorld;
  let pty: PtySession | undefined;
  const snap = (at: string) => s.snaps.find((x) => x.at === at);
  const delta = (from: string, to: string, era: string) => (snap(to)?.eras[era] ?? Number.NaN) - (snap(from)?.eras[era] ?? Number.NaN);

  /** airlock/status through the raw JSON-RPC method (a 2025-era request of the test's own). */
  async function status(at?: string): Promise<Snap> {
    const body = await w.daemon.rpc("airlock/status", {});
    const r = body.result;
    const x = { at: at ?? "", eras: (r?.eras ?? {}) as Eras, byClient: (r?.eras_by_client ?? {}) as Record<string, Eras>, heavy: r?.pools?.find((p: any) => p.pool === "heavy") };
    if (at) s.snaps.push(x);
    return x;
  }

  const me = (r: ModelRequest) => agentIdIn(r.all, "claude-code") ?? "claude-code:no-identity-reached-the-model";
  const notified = (r: ModelRequest) => r.lastUserText.includes("<task-notification>");
  const slotToken = (text: string) => /"slot_token":\s*"([0-9a-f]+)"/.exec(text)?.[1] ?? "none";

  async function script(r: ModelRequest): Promise<Turn> {
    if (notified(r)) {
      if (r.turnsSinceUser === 0) {
        await status("notified");
        return { tools: [{ name: "mcp__airlock__release_slot", input: { slot_token: slotToken(r.lastUserText) } }] };
      }
      return { text: "Tests run; slot released." };
    }
    if (!r.lastUserText.includes(PROMPT)) return { text: "Nothing to do." };
    switch (r.turnsSinceUser) {
      case 0:
        await status("first request");
        return { tools: [{ name: "mcp__airlock__acquire_slot", input: { agent_id: me(r), pool: "heavy", reason: "run the test suite", wait_seconds: 1800 } }] };
      case 1:
        // acquire_slot's result is in: the call went to the background; the session goes on.
        await status("backgrounded");
        return { tools: [{ name: "Read", input: { file_path: join(w.repo, "docs/readme.md") } }] };
      case 2: {
        // Still queued behind agent-h, and working. Now agent-h's build ends.
        await status("went on");
        s.results.release = await w.daemon.call("release_slot", { slot_token: s.results.held.slot_token });
        return { text: "Edited what I could; the tests run when the slot comes." };
      }
      default:
        return { text: "Done." };
    }
  }

  beforeAll(async () => {
    if (!existsSync(CLAUDE_BIN) || !Bun.which("python3")) return;
    w = await startWorld();
    // What a Claude Code user already has: onboarding done, the API key of the environment accepted
    // (Claude Code keeps the key's last 20 characters). Nothing of Airlock's.
    writeFileSync(
      join(w.home, ".claude.json"),
      `${JSON.stringify({ hasCompletedOnboarding: true, customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] } }, null, 2)}\n`,
    );
    s.setupOut = await w.airlock(["setup", "claude-code"], w.repo);
    s.results.held = await w.daemon.call("acquire_slot", { agent_id: "agent-h", pool: "heavy", reason: "agent-h's build" });
    w.model.script(script);
    const before = await status("before");

    const env = w.userEnv({
      TERM: "xterm-256color",
      ANTHROPIC_BASE_URL: w.model.url,
      ANTHROPIC_API_KEY: API_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    });
    delete env.NO_COLOR;
    pty = startInPty([CLAUDE_BIN], { cwd: w.repo, env, timeoutMs: SESSION_TIMEOUT_MS });
    try {
      await trustTheFolder(pty);
      // The session is up once its MCP client has listed our tools (two modern requests: server/discover, tools/list).
      await until(
        "Claude Code's MCP handshake with the daemon",
        async () => ((await status()).eras[MODERN] ?? 0) - (before.eras[MODERN] ?? 0) >= 2,
        STEP_MS,
        500,
      );
      await status("connected");
      const typed = pty.screen().length;
      pty.type(PROMPT);
      await pty.waitFor(PROMPT, STEP_MS, typed);
      pty.type("\r");
      await until("the model's last turn", () => w.model.requests.some((r) => r.reply?.text === "Tests run; slot released."), STEP_MS * 2, 100);
    } catch (err) {
      s.error = err instanceof Error ? err.message : String(err);
    }
    s.run = await pty.close();
    await status("after");
  }, 120_000);

  afterAll(async () => {
    if (!w) return;
    mkdirSync(OUT, { recursive: true });
    const out = join(OUT, "live-claude-tasks.txt");
    const run = s.run;
    writeFileSync(
      out,
      [
        `session: exit ${run?.code ?? "-"}${run?.timedOut ? " (timed out)" : ""} in ${run?.ms ?? "-"} ms; harness error: ${s.error ?? "none"}`,
        `setup:\n${s.setupOut?.stdout ?? ""}`,
        `daemon status along the way:\n${s.snaps.map((x) => `${x.at}: eras ${JSON.stringify(x.eras)} by client ${JSON.stringify(x.byClient)} heavy ${JSON.stringify(x.heavy)}`).join("\n")}`,
        `model requests:\n${transcript(w.model.requests)}`,
        `script errors: ${w.model.errors.join("; ") || "none"}`,
        `screen (blanks dropped), last 4000 characters:\n${pty?.screen().slice(-4000) ?? ""}`,
      ].join("\n\n"),
    );
    console.log(`live Claude Code tasks: session exit ${run?.code ?? "-"} (${run?.ms ?? "-"} ms); ${w.model.requests.length} model requests; transcript in ${out}`);
    await w.close();
  });

  live("the session runs to its end: setup, the trust dialog, the prompt, the last model turn, no script error", () => {
    expect(s.setupOut?.code).toBe(0);
    expect(s.error).toBeUndefined();
    expect(s.run?.timedOut).toBe(false);
    expect(w.model.errors).toEqual([]);
    expect(w.model.requests.some((r) => r.reply?.text === "Tests run; slot released.")).toBe(true);
  });

  live("Claude Code speaks the 2026-07-28 era to the daemon", () => {
    // Its MCP handshake (before the prompt): server/discover and tools/list, both modern.
    expect(delta("before", "connected", MODERN)).toBeGreaterThanOrEqual(2);
    // The tools/call of acquire_slot: modern.
    expect(delta("first request", "backgrounded", MODERN)).toBeGreaterThanOrEqual(1);
    // And tasks/get, which exists only in the modern era, until the grant was seen.
    expect(delta("backgrounded", "notified", MODERN)).toBeGreaterThanOrEqual(1);
    // Every request of Claude Code's own was modern; the 2025 ones came from our hooks and reads.
    const last = s.snaps.at(-1)!;
    const claude = Object.entries(last.byClient).filter(([agent]) => agent.startsWith("claude-code/"));
    expect(claude.length).toBeGreaterThanOrEqual(1);
    for (const [, eras] of claude) {
      expect(eras["2025"]).toBe(0);
      expect(eras[MODERN]).toBeGreaterThanOrEqual(4);
    }
  });

  live("a long slot wait becomes a task: Claude Code moves it to the background, the daemon keeps its place in line", () => {
    const res = w.model.requests.flatMap((r) => r.results).find((x) => x.name === "mcp__airlock__acquire_slot");
    expect(res).toBeDefined();
    console.log(`acquire_slot's result as the model received it: ${JSON.stringify(res!.text)}`);
    expect(res!.text).toContain("moved to the background");
    expect(res!.isError).toBe(false);
    // Daemon side, while the model goes on: agent-h holds the slot, the session's task waits in line, attached.
    const heavy = snap("backgrounded")?.heavy;
    expect(heavy?.holders.map((h: any) => h.agent_id)).toEqual(["agent-h"]);
    const id = agentIdIn(w.model.requests[0]!.all, "claude-code");
    expect(id).toBeDefined();
    expect(heavy?.waiters).toEqual([expect.objectContaining({ agent_id: id, state: "queued", blocked: true })]);
  });

  live("the session goes on while the slot is still held", () => {
    const went = w.model.requests.find((r) => r.lastUserText.includes(PROMPT) && r.turnsSinceUser === 2);
    expect(went).toBeDefined();
    expect(went!.results.at(-1)?.name).toBe("Read");
    // That turn happened while agent-h still held the slot and before anything was notified.
    expect(snap("went on")?.heavy?.holders.map((h: any) => h.agent_id)).toEqual(["agent-h"]);
    expect(w.model.requests.findIndex(notified)).toBeGreaterThan(w.model.requests.indexOf(went!));
  });

  live("when agent-h releases, the model is told in a new turn: a <task-notification> with the grant", () => {
    expect(s.results.release).toEqual({ released: true });
    const told = w.model.requests.filter((r) => notified(r) && r.turnsSinceUser === 0);
    expect(told.length).toBe(1);
    const text = told[0]!.lastUserText;
    console.log(`the notification as the model received it: ${JSON.stringify(text)}`);
    expect(text).toContain("<status>completed</status>");
    expect(text).toContain('"granted":true');
    // Granted to the session: it held the slot when told, and the token it was given releases it.
    const id = agentIdIn(w.model.requests[0]!.all, "claude-code");
    expect(snap("notified")?.heavy?.holders.map((h: any) => h.agent_id)).toEqual([id]);
    const released = w.model.requests.flatMap((r) => r.results).find((x) => x.name === "mcp__airlock__release_slot");
    expect(JSON.parse(released!.text)).toEqual({ released: true });
    expect(snap("after")?.heavy?.holders).toEqual([]);
  });
});
