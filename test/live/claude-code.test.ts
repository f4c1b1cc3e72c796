// The real Claude Code CLI (npm @anthropic-ai/claude-code, pinned) in headless sessions, with the
// model played by a scripted server on loopback, on a machine set up the way a user sets it up:
// a daemon on a port that is not the default one, `airlock setup claude-code` with nothing else in
// the environment, then `claude -p … --permission-mode acceptEdits` (the flag a headless user
// passes to let the agent edit) in a git repository Claude Code has never seen (no trust written).
// Everything asserted is what reached the model or the disk: the denial text inside the Write's
// tool_result, the SessionStart identity in the request, the file's bytes.
//
// Session 1 (one `claude -p`): Read three files; Write src/locked.ts (inside agent-a's claim of
// src/** on this repository: denied); Write lib/free.ts (agent-b claimed lib/** on ANOTHER
// repository: allowed); Edit docs/readme.md (no claim: allowed); claim_paths through the MCP
// server; acquire_slot in pool heavy, which agent-h holds (queued); agent-h releases, so the slot
// is offered; the model stops; the Stop hook holds it once with the offer; the model takes the
// slot, releases it, stops again, and is let go.
// Session 2 (`claude -p --resume`): the identity is injected again on resume; the model's first
// answer reports a full context, Claude Code compacts, and the identity is injected again after
// the compaction.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/daemon.ts";
import { agentIdIn, allResults, CLAUDE_BIN, FILES, LIVE_FILE_TIMEOUT_MS, injectedAfterHistory, liveTest, type LiveWorld, type RunResult, runBounded, startWorld } from "../helpers/live-session.ts";
import { type ModelRequest, transcript, type Turn } from "../helpers/model-server.ts";
import { until } from "../helpers/until.ts";

const live = liveTest(CLAUDE_BIN, "Claude Code CLI");
const OUT = process.env.AIRLOCK_ARTIFACTS ?? join(ROOT, ".ci/out");

const PROMPT1 = "LIVE-1: tidy up this repository.";
const PROMPT2 = "LIVE-2: look at the readme again.";
/** The summary our model writes when Claude Code compacts: it carries no agent id, so one seen after it was injected afresh. */
const SUMMARY = "SUMMARY-OF-EARLIER-WORK: three files read and edited, one denied.";
/** Claude Code's wrapper around a Stop hook's reason, as the model receives it. */
const STOP_FEEDBACK = "Stop hook feedback";
/** Far past any Claude model's context window: Claude Code then compacts before its next request. */
const FULL_CONTEXT_TOKENS = 995_000;

const FLAGS = ["--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose"];

describe("Claude Code, headless, set up as a user sets it up", () => {
  let w: LiveWorld;
  let setupOut: RunResult;
  let run1: RunResult;
  let run2: RunResult | undefined;
  let r1: ModelRequest[] = [];
  let r2: ModelRequest[] = [];
  let sid: string | undefined;
  let claims: Record<string, any> = {};

  const me = (r: ModelRequest) => agentIdIn(r.all, "claude-code") ?? "claude-code:no-identity-reached-the-model";
  const resultOf = (r: ModelRequest, name: string) => r.results.findLast((x) => x.name === name);
  const wakeToken = (r: ModelRequest) => /"wake_token":"([0-9a-f]+)"/.exec(resultOf(r, "mcp__airlock__acquire_slot")?.text ?? "")?.[1] ?? "none";
  const slotToken = (r: ModelRequest) => /"slot_token":"([0-9a-f]+)"/.exec(resultOf(r, "mcp__airlock__acquire_slot")?.text ?? "")?.[1] ?? "none";

  async function script(r: ModelRequest): Promise<Turn> {
    const file = (rel: string) => join(w.repo, rel);
    if (r.all.includes(SUMMARY)) return { text: "Picked up after the compaction; nothing left to do." };
    if (r.lastUserText.includes(STOP_FEEDBACK)) {
      // Held at the stop with an offer: take the slot, give it back, stop again.
      if (r.turnsSinceUser === 0) return { tools: [{ name: "mcp__airlock__acquire_slot", input: { agent_id: me(r), pool: "heavy", wake_token: wakeToken(r) } }] };
      if (r.turnsSinceUser === 1) return { tools: [{ name: "mcp__airlock__release_slot", input: { slot_token: slotToken(r) } }] };
      return { text: "All done." };
    }
    if (r.lastUserText.includes(PROMPT1)) {
      switch (r.turnsSinceUser) {
        case 0:
          return { tools: ["src/locked.ts", "lib/free.ts", "docs/readme.md"].map((f) => ({ name: "Read", input: { file_path: file(f) } })) };
        case 1:
          return { tools: [{ name: "Write", input: { file_path: file("src/locked.ts"), content: "export const locked = 2;\n" } }] };
        case 2:
          return { tools: [{ name: "Write", input: { file_path: file("lib/free.ts"), content: "export const free = 2;\n" } }] };
        case 3:
          return { tools: [{ name: "Edit", input: { file_path: file("docs/readme.md"), old_string: "old line", new_string: "new line" } }] };
        case 4:
          return { tools: [{ name: "mcp__airlock__claim_paths", input: { agent_id: me(r), paths: ["docs/**"], room: w.repo, reason: "rewriting the docs" } }] };
        case 5:
          return { tools: [{ name: "mcp__airlock__acquire_slot", input: { agent_id: me(r), pool: "heavy", reason: "run the test suite" } }] };
        case 6: {
          // agent-h's build ends: the slot is offered to the first in line (this session, if it queued).
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
      if (r.turnsSinceUser === 0) return { tools: [{ name: "Read", input: { file_path: file("docs/readme.md") } }], inputTokens: FULL_CONTEXT_TOKENS };
      return { text: "Looked again." };
    }
    if (/summar/i.test(r.lastUserText)) return { text: SUMMARY }; // Claude Code's compaction request
    return { text: "Nothing to do." };
  }

  const claude = (args: string[]) =>
    runBounded([CLAUDE_BIN, ...args, ...FLAGS], {
      cwd: w.repo,
      env: w.userEnv({
        ANTHROPIC_BASE_URL: w.model.url,
        ANTHROPIC_API_KEY: "sk-ant-live-test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      }),
    });

  beforeAll(async () => {
    if (!existsSync(CLAUDE_BIN)) return;
    w = await startWorld();
    // What a Claude Code user already has: onboarding done. Nothing else, and nothing of Airlock's.
    writeFileSync(join(w.home, ".claude.json"), `${JSON.stringify({ hasCompletedOnboarding: true }, null, 2)}\n`);
    setupOut = await w.airlock(["setup", "claude-code"], w.repo);
    claims.a = await w.daemon.call("claim_paths", { agent_id: "agent-a", paths: ["src/**"], room: w.repo, reason: "refactoring src" });
    claims.b = await w.daemon.call("claim_paths", { agent_id: "agent-b", paths: ["lib/**"], room: w.otherRepo, reason: "lib in the other repository" });
    claims.slot = await w.daemon.call("acquire_slot", { agent_id: "agent-h", pool: "heavy", reason: "agent-h's build" });
    w.model.script(script);

    run1 = await claude(["-p", PROMPT1]);
    r1 = w.model.requests.slice();
    sid = run1.events.find((e) => e.type === "system" && e.subtype === "init")?.session_id;
    // Between the sessions another agent claims something, so the context on resume is news.
    claims.c = await w.daemon.call("claim_paths", { agent_id: "agent-c", paths: ["tests/**"], room: w.repo, reason: "new tests" });
    if (sid) {
      run2 = await claude(["-p", PROMPT2, "--resume", sid]);
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
    writeFileSync(join(OUT, "live-claude-code.txt"), `${head}\n\n${setupOut?.stdout ?? ""}\n${transcript(w.model.requests)}\n\nscript errors: ${w.model.errors.join("; ") || "none"}\n`);
    console.log(`live Claude Code: ${runs.map(([n, r]) => `${n} exit ${r?.code ?? "-"} (${r?.ms ?? "-"} ms)`).join(", ")}; ${w.model.requests.length} model requests; transcript in ${join(OUT, "live-claude-code.txt")}`);
    await w.close();
  });

  live("setup succeeds and the sessions end normally", () => {
    expect(setupOut.code).toBe(0);
    expect(run1.timedOut).toBe(false);
    expect(run1.code).toBe(0);
    expect(sid).toBeDefined();
    expect(run2?.code).toBe(0);
    expect(w.model.errors).toEqual([]);
  });

  live("the SessionStart identity reaches the model", () => {
    expect(r1.length).toBeGreaterThan(0);
    expect(r1[0]!.all).toContain(`claude-code:${sid}`);
  });

  live("a Write inside another agent's claim on this repository is denied, and the denial reaches the model", () => {
    expect(claims.a.granted).toBe(true);
    const denied = allResults(r1).find((x) => x.name === "Write" && String((x.input as any)?.file_path).endsWith("src/locked.ts"));
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
    const write = allResults(r1).find((x) => x.name === "Write" && String((x.input as any)?.file_path).endsWith("lib/free.ts"));
    expect(write?.isError).toBe(false);
    expect(w.read("lib/free.ts")).toBe("export const free = 2;\n");
    expect(w.read("lib/free.ts", w.otherRepo)).toBe(FILES["lib/free.ts"]!);
  });

  live("an Edit outside every claim goes through", () => {
    const edit = allResults(r1).find((x) => x.name === "Edit");
    expect(edit?.isError).toBe(false);
    expect(w.read("docs/readme.md")).toBe("# Readme\n\nnew line\n");
  });

  live("the model's own claim_paths call succeeds headless", async () => {
    const res = allResults(r1).find((x) => x.name === "mcp__airlock__claim_paths");
    expect(res).toBeDefined();
    expect(res!.text).not.toContain("haven't granted");
    expect(res!.isError).toBe(false);
    expect(JSON.parse(res!.text).granted).toBe(true);
    expect(run1.events.filter((e) => e.type === "system" && e.subtype === "permission_denied")).toEqual([]);
    const held = (await w.daemon.call("list_path_claims", { room: w.repo })) as any[];
    expect(held.some((c) => c.agent_id === `claude-code:${sid}` && c.paths.includes("docs/**"))).toBe(true);
  });

  live("a Stop with a pending slot offer is held once, then allowed", () => {
    const held = r1.filter((r) => r.lastUserText.includes(STOP_FEEDBACK) && r.turnsSinceUser === 0);
    expect(held.length).toBe(1);
    expect(held[0]!.lastUserText).toContain("heavy");
    expect(held[0]!.lastUserText).toContain(`claude-code:${sid}`);
    // Held with the offer, the model took the slot; the next stop was let go.
    const took = allResults(r1).filter((x) => x.name === "mcp__airlock__acquire_slot");
    expect(took.map((x) => JSON.parse(x.text).granted)).toEqual([false, true]);
    const result = run1.events.find((e) => e.type === "result");
    expect(result?.subtype).toBe("success");
    expect(r1.at(-1)!.reply?.text).toBe("All done.");
  });

  live("the identity is injected again on resume", () => {
    expect(r2.length).toBeGreaterThan(0);
    // Not only the copy in the resumed history: a fresh one from SessionStart (source "resume").
    // Claude Code drops a SessionStart context identical to one already in the history; agent-c's
    // claim between the sessions makes this one news (when the hook reaches the daemon).
    expect(r2[0]!.all).toContain(`claude-code:${sid}`);
    expect(injectedAfterHistory(r2[0]!, `claude-code:${sid}`)).toBe(true);
  });

  live("the identity is injected again after a compaction", () => {
    expect(run2?.events.some((e) => e.type === "system" && e.subtype === "compact_boundary")).toBe(true);
    const after = r2.find((r) => r.all.includes(SUMMARY));
    expect(after).toBeDefined();
    const summaryAt = after!.items.findIndex((it) => it.kind === "text" && it.text.includes(SUMMARY));
    const idAt = after!.items.findLastIndex((it) => it.kind === "text" && it.text.includes(`claude-code:${sid}`));
    expect(summaryAt).toBeGreaterThanOrEqual(0);
    expect(idAt).toBeGreaterThan(summaryAt);
  });
});
