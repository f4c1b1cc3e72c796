// The OpenCode plugin `airlock setup opencode` writes: one self-contained JS file in OpenCode's
// plugin folder (~/.config/opencode/plugins/airlock.js, or the project's .opencode/plugins/;
// OpenCode 1.18.33 loads both `plugins/` and the older `plugin/`, seen here), no npm package.
// Contract: V1 (https://opencode.ai/docs/plugins/): an exported async function that receives
// {project, client, $, directory, worktree} and returns hooks. OpenCode 2.x runs only V2 plugins
// (`Plugin.define`), whose hook names are not documented yet: setup reads `opencode --version`
// and writes this file only for 1.x (opencode.ts).
//
// Every decision is `airlock hook opencode <event>` (src/clients/hooks/opencode.ts: the wire),
// so the plugin has no daemon client, no port and no token of its own: the CLI finds the daemon
// and reads the token as every hook does. Each call is bounded (HOOK_MS) and fails open.
// - tool.execute.before, for the edit tools only: pre-edit; a denial is thrown, which blocks the
//   tool and hands the message (holder, claim, witness) to the model.
// - experimental.chat.system.transform: session-start once per session (identity, policy, what
//   others hold), merged into system[0] (some backends take one system message).
// - session.idle: stop (a slot offer, messages asking for attention), else prompt (any new
//   message); if either has something, promptAsync starts a new turn with it. While the session stays idle it asks again every POLL_MS, and wakes it once
//   per offer (the pools it woke for are kept until the offer ends) and once per message (the
//   daemon delivers each once).
// - The working tree is reported by those same hooks (session-start, pre-edit, stop: see
//   hooks/worktree.ts), as for every client with hooks: the plugin has no report of its own.
import type { Part, SetupContext } from "./client.ts";

export const PLUGIN_FILE = "airlock.js";
export const PLUGIN_MARKER = "airlock-opencode-plugin";

/** The plugin's text, calling `airlock` as `cmd` (a shell command line). */
export function opencodePluginSource(cmd: string): string {
  return `// ${PLUGIN_MARKER} v1: written by \`airlock setup opencode\`; \`airlock setup opencode --remove\` deletes it.
// OpenCode plugin, V1 contract (https://opencode.ai/docs/plugins/). Every decision is made by
// \`airlock hook opencode EVENT\` (JSON in on stdin, JSON out); see Airlock's docs/clients.md.
import { spawn } from "node:child_process";

const AIRLOCK = ${JSON.stringify(cmd)};
const EDIT_TOOLS = new Set(["edit", "write", "multiedit", "patch", "apply_patch"]);
const HOOK_MS = 20000;
const POLL_MS = Number(process.env.AIRLOCK_OPENCODE_POLL_MS) || 5000;

/** Runs one Airlock hook; resolves to its JSON answer, {} on any failure (fail open). */
function hook(event, input) {
  return new Promise((resolve) => {
    let out = "";
    let done = false;
    const finish = (v) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(v);
    };
    const child = spawn("sh", ["-c", AIRLOCK + " hook opencode " + event], { stdio: ["pipe", "pipe", "ignore"], cwd: input.cwd });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish({ warning: "Airlock hook " + event + " did not answer in " + HOOK_MS + " ms; allowing" });
    }, HOOK_MS);
    child.on("error", (err) => finish({ warning: "Airlock hook " + event + " could not run: " + err.message }));
    child.stdout.on("data", (d) => (out += d));
    child.on("close", () => {
      try {
        finish(JSON.parse(out || "{}"));
      } catch {
        finish({ warning: "Airlock hook " + event + " answered no JSON" });
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

/** Runs \`airlock ARGS\`; resolves to stdout, or undefined when it fails. */
function airlock(args) {
  return new Promise((resolve) => {
    let out = "";
    const child = spawn("sh", ["-c", AIRLOCK + " " + args.map((a) => "'" + a.replaceAll("'", "'\\\\''") + "'").join(" ")], { stdio: ["ignore", "pipe", "ignore"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), HOOK_MS);
    child.on("error", () => resolve(undefined));
    child.stdout.on("data", (d) => (out += d));
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? out : undefined);
    });
  });
}

/** The pools a stop reason says are offered (its first paragraph, when it is an offer). */
function offeredPools(reason) {
  const first = reason.split("\\n\\n")[0];
  if (!first.startsWith("Airlock: your turn has come")) return { pools: [], rest: reason };
  return { pools: [...first.matchAll(/\`([^\`]+)\`/g)].map((m) => m[1]), rest: reason.slice(first.length).trim() };
}

export const AirlockPlugin = async ({ client, directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const log = (level, message) => client?.app?.log?.({ body: { service: "airlock", level, message } })?.catch?.(() => {});
  const warn = (out) => {
    if (out && out.warning) log("warn", out.warning);
    return out;
  };
  const contexts = new Map(); // session id -> Promise of its system text
  const offered = new Map(); // session id -> pools it was woken for, while offered
  const polls = new Map(); // session id -> timer while idle

  function stopPolling(id) {
    clearTimeout(polls.get(id));
    polls.delete(id);
  }

  /** At idle: wake the session if a new offer or new messages are there; else ask again later. */
  async function checkIdle(id) {
    polls.delete(id);
    const out = warn(await hook("stop", { session_id: id, cwd }));
    const seen = offered.get(id) ?? new Set();
    let text = "";
    if (out.decision === "block" && typeof out.reason === "string") {
      const { pools, rest } = offeredPools(out.reason);
      const fresh = pools.filter((p) => !seen.has(p));
      for (const p of [...seen]) if (!pools.includes(p)) seen.delete(p);
      for (const p of fresh) seen.add(p);
      if (fresh.length || rest) text = out.reason;
    } else seen.clear();
    offered.set(id, seen);
    // A stop holds only for an offer or a message asking for attention; an idle session is woken
    // for every new message, so ask for them as at a prompt (each is delivered once).
    if (!text) text = warn(await hook("prompt", { session_id: id, cwd })).context ?? "";
    log("debug", "idle check " + id + ": " + (text ? "waking the session" : "nothing new"));
    if (text) {
      try {
        await client.session.promptAsync({ path: { id }, body: { parts: [{ type: "text", text }] } });
        return;
      } catch (err) {
        log("warn", "Airlock could not wake the session: " + (err && err.message));
      }
    }
    if (!polls.has(id)) polls.set(id, setTimeout(() => void checkIdle(id), POLL_MS));
  }

  return {
    event: async ({ event }) => {
      const id = event?.properties?.sessionID;
      if (!id) return;
      if (event.type === "session.idle") {
        stopPolling(id);
        await checkIdle(id);
      } else if ((event.type === "session.status" && event.properties.status?.type === "busy") || event.type === "session.deleted") stopPolling(id);
    },
    "tool.execute.before": async (input, output) => {
      if (!EDIT_TOOLS.has(input.tool)) return;
      const out = warn(await hook("pre-edit", { session_id: input.sessionID, cwd, tool: input.tool, args: output.args }));
      if (out.decision === "deny") throw new Error(out.reason);
    },
    "experimental.chat.system.transform": async (input, output) => {
      const id = input.sessionID;
      if (!id) return;
      if (!contexts.has(id)) {
        contexts.set(id, hook("session-start", { session_id: id, cwd }).then((o) => warn(o).context ?? ""));
      }
      const text = await contexts.get(id);
      if (!text) return;
      if (output.system.length) output.system[0] = output.system[0] + "\\n\\n" + text;
      else output.system.push(text);
    },
  };
};
`;
}

export function opencodePluginPath(ctx: SetupContext): string {
  return ctx.project ? `${ctx.project}/.opencode/plugins/${PLUGIN_FILE}` : `${ctx.xdgConfigHome}/opencode/plugins/${PLUGIN_FILE}`;
}

/** The whole file is ours: install writes it, remove empties it (setup deletes a file it created). */
export function opencodePluginPart(ctx: SetupContext): Part {
  const text = opencodePluginSource(ctx.airlock);
  return {
    what: "plugin",
    path: opencodePluginPath(ctx),
    install: () => text,
    remove: (t) => (t.includes(PLUGIN_MARKER) ? "" : t),
    isInstalled: (t) => t !== null && t.includes(PLUGIN_MARKER),
    isEmpty: (t) => t.trim() === "",
  };
}
