// The real Codex CLI (npm @openai/codex, pinned; its native binary is the optional dependency
// @openai/codex-linux-x64) in headless `codex exec` sessions, with the model played by a scripted
// Responses API server on loopback, on a machine set up the way a user sets it up: a daemon on a
// port that is not the default one, a Codex already pointed at its model provider, `airlock setup
// codex` with nothing else in the environment (then the one export setup tells the user to add to
// their shell profile), and `codex exec --json -s workspace-write` (what a headless user passes to
// let the agent edit). No hook trust is written by the test: Codex runs a hook only once its hash
// is trusted, and recording that is setup's job.
//
// Session 1 (one `codex exec`): apply_patch src/locked.ts (inside agent-a's claim of src/** on this
// repository: denied); apply_patch lib/free.ts (agent-b claimed lib/** on ANOTHER repository:
// allowed); apply_patch docs/readme.md (no claim: allowed); tool_search finds Airlock's deferred
// MCP tools; claim_paths; acquire_slot in pool heavy, which agent-h holds (queued); agent-h
// releases, so the slot is offered; the model stops; the Stop hook holds it once with the offer;
// the model takes the slot, releases it, stops again, and is let go.
// Session 2 (`codex exec resume`): the identity is injected again on resume; the model's first
// answer reports a full context, Codex compacts mid-turn, and the identity is injected again.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/daemon.ts";
import { agentIdIn, allResults, CODEX_BIN, FILES, injectedAfterHistory, LIVE_FILE_TIMEOUT_MS, liveTest, type LiveWorld, type RunResult, runBounded, startWorld } from "../helpers/live-session.ts";
import { type ModelRequest, transcript, type Turn } from "../helpers/model-server.ts";
import { until } from "../helpers/until.ts";

const live = liveTest(CODEX_BIN, "Codex CLI");
const OUT = process.env.AIRLOCK_ARTIFACTS ?? join(ROOT, ".ci/out");

const PROMPT1 = "LIVE-1: tidy up this repository.";
const PROMPT2 = "LIVE-2: look at the readme again.";
/** The summary our model writes when Codex compacts: it carries no agent id, so one seen after it was injected afresh. */
const SUMMARY = "SUMMARY-OF-EARLIER-WORK: three files patched, one denied.";
/** Codex's wrapper around a Stop hook's reason, as the model receives it (a user message). */
const STOP_FEEDBACK = "<hook_prompt";
/** Far past any model's context window: Codex then compacts before its next request. */
const FULL_CONTEXT_TOKENS = 5_000_000;
/** The model provider a Codex user already has; its key is the provider's env_key. */
const MODEL_KEY_ENV = "MOCK_MODEL_API_KEY";

const patch = (file: string, from: string, to: string) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

describe("Codex, headless, set up as a user sets it up", () => {
  let w: LiveWorld;
  let setupOut: RunResult;
  let run1: RunResult;
  let run2: RunResult | undefined;
  let r1: ModelRequest[] = [];
  let r2: ModelRequest[] = [];
  let tid: string | undefined;
  let exportsToken = false;
  const claims: Record<string, any> = {};

  const me = (r: ModelRequest) => agentIdIn(r.all, "codex") ?? "codex:no-identity-reached-the-model";
  const resultOf = (r: ModelRequest, name: string) => r.results.findLast((x) => x.name === name);
  const wakeToken = (r: ModelRequest) => /"wake_token":"([0-9a-f]+)"/.exec(resultOf(r, "mcp__airlock__acquire_slot")?.text ?? "")?.[1] ?? "none";
  const slotToken = (r: ModelRequest) => /"slot_token":"([0-9a-f]+)"/.exec(resultOf(r, "mcp__airlock__acquire_slot")?.text ?? "")?.[1] ?? "none";
  const airlockTool = (name: string, input: Record<string, unknown>): Turn => ({ tools: [{ namespace: "mcp__airlock", name, input }] });

  async function script(r: ModelRequest): Promise<Turn> {
    if (r.all.includes(SUMMARY)) return { text: "Picked up after the compaction; nothing left to do." };
    if (r.lastUserText.includes(STOP_FEEDBACK)) {
      if (r.turnsSinceUser === 0) return airlockTool("acquire_slot", { agent_id: me(r), pool: "heavy", wake_token: wakeToken(r) });
      if (r.turnsSinceUser === 1) return airlockTool("release_slot", { slot_token: slotToken(r) });
      return { text: "All done." };
    }
    if (r.lastUserText.includes(PROMPT1)) {
      switch (r.turnsSinceUser) {
        case 0:
          return { tools: [{ name: "apply_patch", input: patch("src/locked.ts", "export const locked = 1;", "export const locked = 2;") }] };
        case 1:
          return { tools: [{ name: "apply_patch", input: patch("lib/free.ts", "export const free = 1;", "export const free = 2;") }] };
        case 2:
          return { tools: [{ name: "apply_patch", input: patch("docs/readme.md", "old line", "new line") }] };
        case 3:
          // Codex offers MCP tools only through its client-side tool search, as a model finds them.
          return { tools: [{ kind: "tool_search", name: "tool_search", input: { query: "airlock claim paths slot", limit: 8 } }] };
        case 4:
          return airlockTool("claim_paths", { agent_id: me(r), paths: ["docs/**"], room: w.repo, reason: "rewriting the docs" });
        case 5:
          return airlockTool("acquire_slot", { agent_id: me(r), pool: "heavy", reason: "run the test suite" });
        case 6: {
          await w.daemon.call("release_slot", { slot_token: claims.slot.slot_token });
          await until(
            "the slot offered to the session",
            async () => ((await w.daemon.call("list_pools")) as any[]).some((p) => p.waiters.some((x: any) => x.agent_id === me(r) && x.state === "offered")),
            5000,
            50,
          ).catch(() => undefined); // not offered: the Stop assertion says so
          return { text: "Done for now." };
        }
        default:
          return { text: "Done." };
      }
    }
    if (r.lastUserText.includes(PROMPT2)) {
      if (r.turnsSinceUser === 0) return { tools: [{ name: "exec_command", input: { cmd: "cat docs/readme.md" } }], inputTokens: FULL_CONTEXT_TOKENS };
      return { text: "Looked again." };
    }
    if (/compact|summar/i.test(r.lastUserText)) return { text: SUMMARY }; // Codex's compaction request
    return { text: "Nothing to do." };
  }

  const codexEnv = () => {
    const extra: Record<string, string> = { [MODEL_KEY_ENV]: "sk-live-test" };
    // The line setup tells the user to put in their shell profile, when it does.
    if (exportsToken) extra.AIRLOCK_TOKEN = readFileSync(join(w.home, ".airlock", "token"), "utf8").trim();
    return w.userEnv(extra);
  };
  const codex = (args: string[]) => runBounded([CODEX_BIN, ...args], { cwd: w.repo, env: codexEnv() });

  beforeAll(async () => {
    if (!existsSync(CODEX_BIN)) return;
    w = await startWorld();
    // What a Codex user already has: a model provider (here, the scripted model). Nothing of Airlock's.
    mkdirSync(join(w.home, ".codex"), { recursive: true });
    writeFileSync(
      join(w.home, ".codex", "config.toml"),
      [
        `model = "gpt-5.5"`,
        `model_provider = "mock"`,
        ``,
        `[model_providers.mock]`,
        `name = "scripted model"`,
        `base_url = "${w.model.url}/v1"`,
        `env_key = "${MODEL_KEY_ENV}"`,
        `wire_api = "responses"`,
        `supports_websockets = false`,
        ``,
      ].join("\n"),
    );
    setupOut = await w.airlock(["setup", "codex"], w.repo);
    exportsToken = /export AIRLOCK_TOKEN=/.test(setupOut.stdout);
    claims.a = await w.daemon.call("claim_paths", { agent_id: "agent-a", paths: ["src/**"], room: w.repo, reason: "refactoring src" });
    claims.b = await w.daemon.call("claim_paths", { agent_id: "agent-b", paths: ["lib/**"], room: w.otherRepo, reason: "lib in the other repository" });
    claims.slot = await w.daemon.call("acquire_slot", { agent_id: "agent-h", pool: "heavy", reason: "agent-h's build" });
    w.model.script(script);

    run1 = await codex(["exec", "--json", "-s", "workspace-write", PROMPT1]);
    r1 = w.model.requests.slice();
    tid = run1.events.find((e) => e.type === "thread.started")?.thread_id;
    claims.c = await w.daemon.call("claim_paths", { agent_id: "agent-c", paths: ["tests/**"], room: w.repo, reason: "new tests" });
    if (tid) {
      run2 = await codex(["exec", "resume", "--json", tid, PROMPT2]);
      r2 = w.model.requests.slice(r1.length);
    }
  }, LIVE_FILE_TIMEOUT_MS);

  afterAll(async () => {
    if (!w) return;
    mkdirSync(OUT, { recursive: true });
    const runs = [
      ["setup", setupOut],
      ["session 1", run1],
      ["session 2 (resume)", run2],
    ] as const;
    const head = runs.map(([n, r]) => `${n}: exit ${r?.code ?? "-"}${r?.timedOut ? " (timed out)" : ""} in ${r?.ms ?? "-"} ms\n${r?.stderr.trim() ?? ""}`).join("\n");
    const events = runs.map(([n, r]) => `${n} events:\n${(r?.events ?? []).map((e) => JSON.stringify(e).slice(0, 400)).join("\n")}`).join("\n");
    writeFileSync(join(OUT, "live-codex.txt"), `${head}\n\n${setupOut?.stdout ?? ""}\n${events}\n\n${transcript(w.model.requests)}\n\nscript errors: ${w.model.errors.join("; ") || "none"}\n`);
    console.log(`live Codex: ${runs.map(([n, r]) => `${n} exit ${r?.code ?? "-"} (${r?.ms ?? "-"} ms)`).join(", ")}; ${w.model.requests.length} model requests; transcript in ${join(OUT, "live-codex.txt")}`);
    await w.close();
  });

  live("setup succeeds and the sessions end normally", () => {
    expect(setupOut.code).toBe(0);
    expect(run1.timedOut).toBe(false);
    expect(run1.code).toBe(0);
    expect(tid).toBeDefined();
    expect(run2?.code).toBe(0);
    expect(w.model.errors).toEqual([]);
  });

  live("setup records the hook trust itself: codex exec runs Airlock's hooks", () => {
    // Codex skips an untrusted hook without a word; a SessionStart record is the sign it ran.
    expect(r1.length).toBeGreaterThan(0);
    expect(r1[0]!.all).toContain(`codex:${tid}`);
  });

  live("the SessionStart identity reaches the model", () => {
    const context = r1[0]?.items.find((it) => it.kind === "text" && it.text.includes(`codex:${tid}`));
    expect(context).toBeDefined();
    expect(context!.kind === "text" && context!.role).toBe("developer");
  });

  live("an apply_patch inside another agent's claim on this repository is denied, and the denial reaches the model", () => {
    expect(claims.a.granted).toBe(true);
    const denied = allResults(r1).find((x) => x.name === "apply_patch" && String(x.input).includes("src/locked.ts"));
    expect(denied).toBeDefined();
    console.log(`the edit's result as the model received it: ${JSON.stringify(denied!.text)}`);
    expect(denied!.text).toContain("PreToolUse hook");
    expect(denied!.text).toContain("agent-a"); // holder
    expect(denied!.text).toContain("src/**"); // claim
    expect(denied!.text).toContain("src/locked.ts"); // witness
    expect(w.read("src/locked.ts")).toBe(FILES["src/locked.ts"]!);
  });

  live("the same kind of claim on another repository does not block an edit here", () => {
    expect(claims.b.granted).toBe(true);
    // Only telling when the pre-edit hook is live in this session: it denied src/locked.ts.
    expect(w.read("src/locked.ts")).toBe(FILES["src/locked.ts"]!);
    const res = allResults(r1).find((x) => x.name === "apply_patch" && String(x.input).includes("lib/free.ts"));
    expect(res?.text).toContain("Success");
    expect(w.read("lib/free.ts")).toBe("export const free = 2;\n");
    expect(w.read("lib/free.ts", w.otherRepo)).toBe(FILES["lib/free.ts"]!);
  });

  live("an apply_patch outside every claim goes through", () => {
    const res = allResults(r1).find((x) => x.name === "apply_patch" && String(x.input).includes("docs/readme.md"));
    expect(res?.text).toContain("Success");
    expect(w.read("docs/readme.md")).toBe("# Readme\n\nnew line\n");
  });

  live("the model's own claim_paths call succeeds headless", async () => {
    const found = allResults(r1).find((x) => x.name === "tool_search");
    expect(found?.text).toContain("claim_paths");
    const res = allResults(r1).find((x) => x.name === "mcp__airlock__claim_paths");
    expect(res).toBeDefined();
    expect(res!.text).toContain(`"granted":true`);
    const held = (await w.daemon.call("list_path_claims", { room: w.repo })) as any[];
    expect(held.some((c) => c.agent_id === `codex:${tid}` && c.paths.includes("docs/**"))).toBe(true);
  });

  live("a Stop with a pending slot offer is held once, then allowed", () => {
    const held = r1.filter((r) => r.lastUserText.includes(STOP_FEEDBACK) && r.turnsSinceUser === 0);
    expect(held.length).toBe(1);
    expect(held[0]!.lastUserText).toContain("heavy");
    expect(held[0]!.lastUserText).toContain(`codex:${tid}`);
    const took = allResults(r1).filter((x) => x.name === "mcp__airlock__acquire_slot");
    expect(took.map((x) => /"granted":(true|false)/.exec(x.text)?.[1])).toEqual(["false", "true"]);
    expect(run1.events.some((e) => e.type === "turn.completed")).toBe(true);
    expect(r1.at(-1)!.reply?.text).toBe("All done.");
  });

  live("hook text reaches the model as written (Codex HTML-escapes < and >)", () => {
    const stop = r1.find((r) => r.lastUserText.includes(STOP_FEEDBACK));
    const context = r1[0]?.items.find((it) => it.kind === "text" && it.text.includes(`codex:${tid}`));
    expect(stop).toBeDefined();
    expect(context).toBeDefined();
    for (const text of [stop!.lastUserText.replace(/<\/?hook_prompt[^>]*>/g, ""), context!.kind === "text" ? context!.text : ""]) {
      expect(text).not.toContain("&lt;");
      expect(text).not.toContain("&gt;");
    }
  });

  live("the identity is injected again on resume", () => {
    expect(r2.length).toBeGreaterThan(0);
    expect(injectedAfterHistory(r2[0]!, `codex:${tid}`)).toBe(true);
  });

  live("the identity is injected again after a compaction", () => {
    const after = r2.find((r) => r.all.includes(SUMMARY));
    expect(after).toBeDefined();
    const summaryAt = after!.items.findIndex((it) => it.kind === "text" && it.text.includes(SUMMARY));
    const idAt = after!.items.findLastIndex((it) => it.kind === "text" && it.text.includes(`codex:${tid}`));
    expect(summaryAt).toBeGreaterThanOrEqual(0);
    expect(idAt).toBeGreaterThan(summaryAt);
  });
});
