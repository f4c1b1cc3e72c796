// The real OpenCode CLI (npm opencode-ai, pinned) with the Airlock plugin `airlock setup opencode`
// installs, the model played by a scripted OpenAI-compatible server on loopback (OpenCode's
// `@ai-sdk/openai-compatible` provider, which it bundles, with baseURL pointing at it). The user
// had only that provider in ~/.config/opencode/opencode.json; the rest is setup's.
// - A denied edit: `opencode run` (one prompt, exits when the session is idle); agent-a claims
//   src/**, the model's `edit` of src/locked.ts is blocked by the plugin's tool.execute.before,
//   the model reads the holder and the witness in the tool result, the file keeps its bytes, and
//   the system prompt carried the session's identity.
// - An idle wake-up: `opencode run` exits once idle, so this one is `opencode serve` driven over
//   its HTTP API (POST /session, POST /session/:id/message). After the turn the session is idle;
//   a message from agent-a arrives, and the plugin's promptAsync starts a new model turn that
//   reads it, once; then a slot in a pool it queued for is offered, and it wakes once more.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/daemon.ts";
import { allResults, liveTest, type LiveWorld, runBounded, startWorld } from "../helpers/live-session.ts";
import { type ModelRequest, transcript } from "../helpers/model-server.ts";
import { freePort, until } from "../helpers/until.ts";
import { clientBin, howToInstall } from "../helpers/client-clis.ts";

const OPENCODE_BIN = clientBin("opencode"); // not in the lockfile: .ci/client-clis.txt
const it = liveTest(OPENCODE_BIN, "OpenCode CLI", howToInstall("opencode-ai"));
const MODEL = "scripted/m1";
const LIVE_MESSAGE = "LIVE-OC-MESSAGE: please look at docs when you can";

const isSide = (r: ModelRequest) => /title generator/i.test(r.system);
const agentOf = (text: string) => /\b(opencode:ses_[A-Za-z0-9]+)\b/.exec(text)?.[1];

function userConfig(w: LiveWorld): void {
  const dir = join(w.home, ".config", "opencode");
  mkdirSync(dir, { recursive: true });
  const provider = { npm: "@ai-sdk/openai-compatible", name: "Scripted", options: { baseURL: `${w.model.url}/v1`, apiKey: "sk-live-test" }, models: { m1: { name: "M1" } } };
  writeFileSync(join(dir, "opencode.json"), `${JSON.stringify({ provider: { scripted: provider }, model: MODEL, small_model: MODEL, autoupdate: false, share: "disabled" }, null, 2)}\n`);
}

/**
 * OpenCode 1.18.33 installs @opencode-ai/plugin into every config folder that has plugins (the
 * typings for plugins that import it; ours imports nothing). Offline its npm retries for minutes
 * before the session starts; npm_config_offline makes the install fail at once, and OpenCode goes
 * on ("background dependency install failed"). The plugin polls an idle session every second here.
 */
const env = (w: LiveWorld) => w.userEnv({ OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1", npm_config_offline: "true", AIRLOCK_OPENCODE_POLL_MS: "1000" });

describe("OpenCode with the Airlock plugin, against a scripted model", () => {
  let w: LiveWorld;
  beforeAll(async () => {
    w = await startWorld();
    symlinkSync(OPENCODE_BIN, join(w.binDir, "opencode"));
    userConfig(w);
    const setup = await w.airlock(["setup", "opencode"], w.repo);
    expect(setup.code).toBe(0);
    await w.daemon.call("claim_paths", { agent_id: "agent-a", paths: ["src/**"], room: w.repo, reason: "refactoring src" });
  }, 60_000);
  afterAll(async () => {
    await w?.close();
  });

  it("a denied edit: the plugin blocks OpenCode's edit tool and the model reads the holder and the witness", async () => {
    const file = join(w.repo, "src/locked.ts");
    w.model.script((r) => {
      if (isSide(r)) return { text: "Live title" };
      if (r.lastUserText.includes("DENY-EDIT") && r.turnsSinceUser === 0) return { tools: [{ name: "edit", input: { filePath: file, oldString: "locked = 1", newString: "locked = 2" } }] };
      return { text: "done" };
    });
    const run = await runBounded([OPENCODE_BIN, "run", "--model", MODEL, "DENY-EDIT: change src/locked.ts"], { cwd: w.repo, env: env(w), timeoutMs: 60_000 });
    const why = `${transcript(w.model.requests)}\n${run.stderr.slice(-2000)}`;
    expect(run.timedOut, why).toBe(false);
    expect(w.model.errors).toEqual([]);
    const edit = allResults(w.model.requests).find((x) => x.name === "edit");
    expect(edit, why).toBeDefined();
    expect(edit!.text).toContain("agent-a's claim src/**");
    expect(edit!.text).toContain("both match");
    expect(edit!.text).toContain("refactoring src");
    expect(w.read("src/locked.ts")).toBe("export const locked = 1;\n");
    const main = w.model.requests.find((r) => !isSide(r))!;
    // One system message: the plugin merged into system[0].
    expect(main.body.messages.filter((m: any) => m.role === "system").length).toBe(1);
    expect(agentOf(main.system), why).toMatch(/^opencode:ses_/);
    expect(main.system).toContain("claim_paths");
    // The same hooks reported the session's working tree (session start, the edit, the stop).
    const trees = (await w.daemon.call("list_worktrees", { room: w.repo })) as { agent_id: string }[];
    expect(trees.map((t) => t.agent_id), why).toContain(agentOf(main.system)!);
  }, 90_000);

  it("an idle wake-up: a message, then a slot offer, each start one new model turn through promptAsync", async () => {
    w.model.script((r) => {
      if (isSide(r)) return { text: "Live title" };
      return { text: r.lastUserText.includes(LIVE_MESSAGE) ? "read the message" : r.lastUserText.includes("your turn has come") ? "taking the slot" : "idle now" };
    });
    const port = freePort();
    const before = w.model.requests.length;
    const log = join(w.root, "opencode-serve.log");
    const proc = Bun.spawn([OPENCODE_BIN, "serve", "--hostname", "127.0.0.1", "--port", String(port), "--print-logs", "--log-level", "DEBUG"], { cwd: w.repo, env: env(w), stdout: Bun.file(log), stderr: Bun.file(log), detached: true });
    const killer = setTimeout(() => process.kill(-proc.pid, "SIGKILL"), 60_000);
    const base = `http://127.0.0.1:${port}`;
    try {
      await until("opencode serve answers", async () => (await fetch(`${base}/session`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined))?.ok === true, 30_000, 200).catch(async (err) => {
        throw new Error(`${err.message}\n${await Bun.file(log).text().catch(() => "")}`);
      });
      const session = (await (await fetch(`${base}/session`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).json()) as { id: string };
      const me = `opencode:${session.id}`;
      const [providerID, modelID] = MODEL.split("/");
      const first = await fetch(`${base}/session/${session.id}/message`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: { providerID, modelID }, parts: [{ type: "text", text: "hello" }] }),
      });
      expect(first.ok).toBe(true);
      const turns = () => w.model.requests.slice(before).filter((r) => !isSide(r));
      expect(turns().length).toBe(1);
      // Queue for a slot agent-h holds, then a message while the session is idle.
      const slot = await w.daemon.call("acquire_slot", { agent_id: "agent-h", pool: "heavy", reason: "agent-h's build" });
      expect(slot.granted, JSON.stringify(slot)).toBe(true);
      const queued = await w.daemon.call("acquire_slot", { agent_id: me, pool: "heavy", reason: "my build" });
      expect(queued.granted, JSON.stringify(queued)).toBe(false);
      await w.daemon.call("send_message", { from: "agent-a", to: [me], subject: "docs", body: LIVE_MESSAGE });
      await until("the message wakes the session", () => turns().some((r) => r.lastUserText.includes(LIVE_MESSAGE)), 30_000, 200).catch(async (err) => {
        throw new Error(`${err.message}\n${transcript(turns())}\n${(await Bun.file(log).text()).split("\n").filter((l) => /airlock|idle|error/i.test(l)).slice(-40).join("\n")}`);
      });
      const woken = turns().find((r) => r.lastUserText.includes(LIVE_MESSAGE))!;
      expect(woken.lastUserText).toContain("from agent-a");
      // The slot frees: agent-h releases, the queued session is offered it and woken for it.
      await w.daemon.call("release_slot", { slot_token: slot.slot_token });
      await until("the offer wakes the session", () => turns().some((r) => r.lastUserText.includes("your turn has come")), 30_000, 200);
      const offer = turns().find((r) => r.lastUserText.includes("your turn has come"))!;
      expect(offer.lastUserText).toContain("heavy");
      // Once per event: a few more idle polls (1 s apart) wake it for neither again.
      const seen = turns().length;
      await Bun.sleep(4000);
      expect(turns().length, transcript(turns())).toBe(seen);
      expect(turns().filter((r) => r.lastUserText.includes(LIVE_MESSAGE)).length).toBe(1);
      expect(turns().filter((r) => r.lastUserText.includes("your turn has come")).length).toBe(1);
    } finally {
      clearTimeout(killer);
      try {
        process.kill(-proc.pid, "SIGKILL");
      } catch {}
      await proc.exited;
    }
  }, 90_000);
});
