// The real Gemini CLI (npm @google/gemini-cli, pinned) in a headless `gemini -p` session, with the
// model played by a scripted Gemini API server on loopback, on a machine set up the way a user
// sets it up: a daemon on a port that is not the default one, a Gemini CLI already set to API-key
// auth (`security.auth.selectedType: "gemini-api-key"` in ~/.gemini/settings.json, what its auth
// dialog saves; GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL in the environment), `airlock setup
// gemini-cli` with nothing else in the environment, then `gemini -p PROMPT --skip-trust
// --approval-mode auto_edit --output-format stream-json`: `--approval-mode auto_edit` is what a
// headless user passes to let the agent edit, `--skip-trust` what Gemini CLI's docs tell a headless
// user to pass in a folder never trusted (it trusts the folder for this session and writes nothing;
// without it `gemini -p` exits 55). The test writes no trustedFolders.json.
//
// Session 1 (one `gemini -p`): read_file three files; write_file src/locked.ts (inside agent-a's claim
// of src/** on this repository: denied by the BeforeTool hook); write_file lib/free.ts (agent-b
// claimed lib/** on ANOTHER repository: allowed); replace in docs/readme.md (no claim: allowed);
// claim_paths through the MCP server (`mcp_airlock_claim_paths`); acquire_slot in pool heavy,
// which agent-h holds (queued); agent-h releases, so the slot is offered; the model stops; the
// AfterAgent hook holds it once with the offer; the model takes the slot, releases it, stops again,
// and is let go.
// Session 2 (`gemini -p … --resume <session id>`): the identity is injected again on resume.
// Compaction is not covered: Gemini CLI compresses its history with a side call and fires
// PreCompress, not SessionStart, and Airlock hooks neither.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/daemon.ts";
import { agentIdIn, allResults, FILES, GEMINI_BIN, injectedAfterHistory, LIVE_FILE_TIMEOUT_MS, liveTest, type LiveWorld, type RunResult, runBounded, startWorld } from "../helpers/live-session.ts";
import { type ModelRequest, transcript, type Turn } from "../helpers/model-server.ts";
import { until } from "../helpers/until.ts";

const live = liveTest(GEMINI_BIN, "Gemini CLI");
const OUT = process.env.AIRLOCK_ARTIFACTS ?? join(ROOT, ".ci/out");

const PROMPT1 = "LIVE-1: tidy up this repository.";
const PROMPT2 = "LIVE-2: look at the readme again.";
/** The start of Airlock's stop reason: an AfterAgent deny sends it to the model as a new prompt. */
const STOP_FEEDBACK = "Airlock: your turn has come";
/** Gemini CLI names an MCP tool mcp_<server>_<tool>. */
const MCP = "mcp_airlock_";

const FLAGS = ["--skip-trust", "--approval-mode", "auto_edit", "--output-format", "stream-json"];

describe("Gemini CLI, headless, set up as a user sets it up", () => {
  let w: LiveWorld;
  let setupOut: RunResult;
  let run1: RunResult;
  let run2: RunResult | undefined;
  let r1: ModelRequest[] = [];
  let r2: ModelRequest[] = [];
  let sid: string | undefined;
  const claims: Record<string, any> = {};

  const me = (r: ModelRequest) => agentIdIn(r.all, "gemini-cli") ?? "gemini-cli:no-identity-reached-the-model";
  const resultOf = (r: ModelRequest, name: string) => r.results.findLast((x) => x.name === name);
  const wakeToken = (r: ModelRequest) => /"wake_token":\s*"([0-9a-f]+)"/.exec(resultOf(r, `${MCP}acquire_slot`)?.text ?? "")?.[1] ?? "none";
  const slotToken = (r: ModelRequest) => /"slot_token":\s*"([0-9a-f]+)"/.exec(resultOf(r, `${MCP}acquire_slot`)?.text ?? "")?.[1] ?? "none";
  const airlockTool = (name: string, input: Record<string, unknown>): Turn => ({ tools: [{ name: `${MCP}${name}`, input }] });

  async function script(r: ModelRequest): Promise<Turn> {
    const file = (rel: string) => join(w.repo, rel);
    if (r.lastUserText.includes(STOP_FEEDBACK)) {
      if (r.turnsSinceUser === 0) return airlockTool("acquire_slot", { agent_id: me(r), pool: "heavy", wake_token: wakeToken(r) });
      if (r.turnsSinceUser === 1) return airlockTool("release_slot", { slot_token: slotToken(r) });
      return { text: "All done." };
    }
    if (r.lastUserText.includes(PROMPT1)) {
      switch (r.turnsSinceUser) {
        case 0:
          return { tools: ["src/locked.ts", "lib/free.ts", "docs/readme.md"].map((f) => ({ name: "read_file", input: { file_path: file(f) } })) };
        case 1:
          return { tools: [{ name: "write_file", input: { file_path: file("src/locked.ts"), content: "export const locked = 2;\n" } }] };
        case 2:
          return { tools: [{ name: "write_file", input: { file_path: file("lib/free.ts"), content: "export const free = 2;\n" } }] };
        case 3:
          return { tools: [{ name: "replace", input: { file_path: file("docs/readme.md"), instruction: "Update the old line.", old_string: "old line", new_string: "new line" } }] };
        case 4:
          return airlockTool("claim_paths", { agent_id: me(r), paths: ["docs/**"], room: w.repo, reason: "rewriting the docs" });
        case 5:
          return airlockTool("acquire_slot", { agent_id: me(r), pool: "heavy", reason: "run the test suite" });
        case 6: {
          // agent-h's build ends: the slot is offered to the first in line (this session, if it queued).
          await w.daemon.call("release_slot", { slot_token: claims.slot.slot_token });
          await until(
            "the slot offered to the session",
            async () => ((await w.daemon.call("list_pools")) as any[]).some((p) => p.waiters.some((x: any) => x.agent_id === me(r) && x.state === "offered")),
            5000,
            50,
          ).catch(() => undefined); // not offered: the stop assertion says so
          return { text: "Done for now." };
        }
        default:
          return { text: "Done." };
      }
    }
    if (r.lastUserText.includes(PROMPT2)) {
      if (r.turnsSinceUser === 0) return { tools: [{ name: "read_file", input: { file_path: file("docs/readme.md") } }] };
      return { text: "Looked again." };
    }
    return { text: "Nothing to do." };
  }

  const gemini = (args: string[]) =>
    runBounded([GEMINI_BIN, ...args, ...FLAGS], {
      cwd: w.repo,
      env: w.userEnv({ GEMINI_API_KEY: "live-test-key", GOOGLE_GEMINI_BASE_URL: w.model.url }),
    });

  beforeAll(async () => {
    if (!existsSync(GEMINI_BIN)) return;
    w = await startWorld();
    // What a Gemini CLI user already has: API-key auth chosen. Nothing else, and nothing of Airlock's.
    mkdirSync(join(w.home, ".gemini"), { recursive: true });
    writeFileSync(join(w.home, ".gemini", "settings.json"), `${JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2)}\n`);
    setupOut = await w.airlock(["setup", "gemini-cli"], w.repo);
    claims.a = await w.daemon.call("claim_paths", { agent_id: "agent-a", paths: ["src/**"], room: w.repo, reason: "refactoring src" });
    claims.b = await w.daemon.call("claim_paths", { agent_id: "agent-b", paths: ["lib/**"], room: w.otherRepo, reason: "lib in the other repository" });
    claims.slot = await w.daemon.call("acquire_slot", { agent_id: "agent-h", pool: "heavy", reason: "agent-h's build" });
    w.model.script(script);

    run1 = await gemini(["-p", PROMPT1]);
    r1 = w.model.requests.slice();
    sid = run1.events.find((e) => e.type === "init")?.session_id;
    // Between the sessions another agent claims something, so the context on resume is news.
    claims.c = await w.daemon.call("claim_paths", { agent_id: "agent-c", paths: ["tests/**"], room: w.repo, reason: "new tests" });
    if (sid) {
      run2 = await gemini(["-p", PROMPT2, "--resume", sid]);
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
    const side = w.model.other.map((o) => `${o.method} ${o.path}`).join("\n");
    writeFileSync(join(OUT, "live-gemini-cli.txt"), `${head}\n\n${setupOut?.stdout ?? ""}\n${events}\n\nside calls:\n${side}\n\n${transcript(w.model.requests)}\n\nscript errors: ${w.model.errors.join("; ") || "none"}\n`);
    console.log(`live Gemini CLI: ${runs.map(([n, r]) => `${n} exit ${r?.code ?? "-"} (${r?.ms ?? "-"} ms)`).join(", ")}; ${w.model.requests.length} model requests; transcript in ${join(OUT, "live-gemini-cli.txt")}`);
    await w.close();
  });

  live("setup succeeds and the session ends normally", () => {
    expect(setupOut.code).toBe(0);
    expect(run1.timedOut).toBe(false);
    expect(run1.code).toBe(0);
    expect(sid).toBeDefined();
    expect(run2?.timedOut).toBe(false);
    expect(run2?.code).toBe(0);
    expect(w.model.errors).toEqual([]);
  });

  live("--skip-trust trusts the folder for the session only: nothing is written", () => {
    expect(existsSync(join(w.home, ".gemini", "trustedFolders.json"))).toBe(false);
    expect(existsSync(join(w.repo, ".gemini"))).toBe(false);
  });

  live("the SessionStart identity reaches the model", () => {
    expect(r1.length).toBeGreaterThan(0);
    expect(r1[0]!.all).toContain(`gemini-cli:${sid}`);
    // Headless, Gemini CLI prepends the context to the prompt: one user text, <hook_context>…</hook_context> then the prompt.
    const context = r1[0]!.items.find((it) => it.kind === "text" && it.text.includes(`gemini-cli:${sid}`));
    expect(context?.kind === "text" && context.role).toBe("user");
    expect(context?.kind === "text" && context.text).toContain(PROMPT1);
  });

  live("a write_file inside another agent's claim on this repository is denied, and the denial reaches the model", () => {
    expect(claims.a.granted).toBe(true);
    const denied = allResults(r1).find((x) => x.name === "write_file" && String((x.input as any)?.file_path).endsWith("src/locked.ts"));
    expect(denied).toBeDefined();
    console.log(`the edit's result as the model received it: ${JSON.stringify(denied!.text)}`);
    expect(denied!.isError).toBe(true);
    expect(denied!.text).toContain("agent-a"); // holder
    expect(denied!.text).toContain("src/**"); // claim
    expect(denied!.text).toContain("src/locked.ts"); // witness
    expect(w.read("src/locked.ts")).toBe(FILES["src/locked.ts"]!);
  });

  live("the same kind of claim on another repository does not block an edit here", () => {
    expect(claims.b.granted).toBe(true);
    // Only telling when the pre-edit hook is live in this session: it denied src/locked.ts.
    expect(w.read("src/locked.ts")).toBe(FILES["src/locked.ts"]!);
    const write = allResults(r1).find((x) => x.name === "write_file" && String((x.input as any)?.file_path).endsWith("lib/free.ts"));
    expect(write?.isError).toBe(false);
    expect(w.read("lib/free.ts")).toBe("export const free = 2;\n");
    expect(w.read("lib/free.ts", w.otherRepo)).toBe(FILES["lib/free.ts"]!);
  });

  live("a replace outside every claim goes through", () => {
    const edit = allResults(r1).find((x) => x.name === "replace");
    expect(edit?.isError).toBe(false);
    expect(w.read("docs/readme.md")).toBe("# Readme\n\nnew line\n");
  });

  live("the model's own claim_paths call succeeds headless", async () => {
    const res = allResults(r1).find((x) => x.name === `${MCP}claim_paths`);
    expect(res).toBeDefined();
    expect(res!.isError).toBe(false);
    expect(res!.text).toMatch(/"granted":\s*true/);
    const held = (await w.daemon.call("list_path_claims", { room: w.repo })) as any[];
    expect(held.some((c) => c.agent_id === `gemini-cli:${sid}` && c.paths.includes("docs/**"))).toBe(true);
  });

  live("a stop (AfterAgent) with a pending slot offer is held once, then allowed", () => {
    const held = r1.filter((r) => r.lastUserText.includes(STOP_FEEDBACK) && r.turnsSinceUser === 0);
    expect(held.length).toBe(1);
    expect(held[0]!.lastUserText).toContain("heavy");
    expect(held[0]!.lastUserText).toContain(`gemini-cli:${sid}`);
    const took = allResults(r1).filter((x) => x.name === `${MCP}acquire_slot`);
    expect(took.map((x) => /"granted":\s*(true|false)/.exec(x.text)?.[1])).toEqual(["false", "true"]);
    expect(r1.at(-1)!.reply?.text).toBe("All done.");
  });

  live("the identity is injected again on resume", () => {
    expect(r2.length).toBeGreaterThan(0);
    // The same session, its history resent: the first session's tool calls are in it. Gemini CLI
    // 0.61.0 leaves out the first prompt (and the SessionStart context prepended to it), so the
    // fresh SessionStart context is the only copy of the identity the resumed model has.
    expect(run2?.events.find((e) => e.type === "init")?.session_id).toBe(sid);
    expect(r2[0]!.items.some((it) => it.kind === "call" && it.name === "write_file")).toBe(true);
    // Injected afresh after every model turn of the resumed history, next to the new prompt.
    expect(injectedAfterHistory(r2[0]!, `gemini-cli:${sid}`)).toBe(true);
    expect(r2[0]!.lastUserText).toContain(PROMPT2);
    expect(r2[0]!.lastUserText).toContain("agent-c"); // news since the first session
  });
});
