// `airlock doctor`, the clients part: for every client setup knows and finds configured (user
// scope, and the current directory's project files), each thing that silently lets an edit
// through when it is wrong: the config is there; the hook command runs (`<cmd> version`); the
// MCP URL answers and is the daemon this CLI finds; the token the client sends is accepted; the
// permission rule that lets a headless agent call Airlock is there; Codex trusts our hooks
// (through its app-server). Every failed check says what to run.
import { existsSync } from "node:fs";
import { parse as parseToml } from "@decimalturn/toml-patch";
import { claudePaths, headersHelper, PERMISSION_RULE } from "../clients/claude-code.ts";
import { getAt, HOOK_EVENTS, hookCommand, installedParts, isOurHookCommand, parseJsonc, setupContext, SERVER_KEY, type Client, type SetupContext } from "../clients/client.ts";
import { clinePaths } from "../clients/cline.ts";
import { codexPaths, TOKEN_ENV } from "../clients/codex.ts";
import { listCodexHooks } from "../clients/codex-trust.ts";
import { commandOfHook, verifyCommand } from "../clients/command.ts";
import { copilotPaths } from "../clients/copilot-cli.ts";
import { cursorPaths } from "../clients/cursor.ts";
import { readOrNull } from "../clients/files.ts";
import { geminiPaths } from "../clients/gemini-cli.ts";
import { juniePaths } from "../clients/junie.ts";
import { CLIENTS } from "../clients/index.ts";
import { kiroPaths } from "../clients/kiro.ts";
import { opencodePaths } from "../clients/opencode.ts";
import { opencodePluginPath, opencodePluginSource } from "../clients/opencode-plugin.ts";
import { vscodePaths } from "../clients/vscode.ts";
import { windsurfPaths } from "../clients/windsurf.ts";
import { probe } from "../config/discovery.ts";
import { errorMessage } from "../errors.ts";
import { shellQuote } from "../shell.ts";
import { daemonEndpoint } from "./client.ts";

/** The same shape as doctor.ts's checks. */
export type Check = { ok: boolean | "warn"; what: string; fix?: string };

/** A client's MCP entry as written: where it points, and how it sends the token. */
interface Entry {
  url?: string;
  /** The Authorization value as written (may hold ${env:…}, {file:…} and the like). */
  authorization?: string;
  /** Claude Code's headersHelper command. */
  headersHelper?: string;
  /** Codex's bearer_token_env_var. */
  tokenEnv?: string;
  /** The permission rule that lets the agent call Airlock without a prompt, where the client has one. */
  permission?: { present: boolean; what: string };
  /** A stdio entry (`airlock mcp`, the bridge): its command and arguments. */
  stdio?: string[];
}

function json(path: string | undefined): unknown {
  const text = path ? readOrNull(path) : null;
  return text === null ? undefined : parseJsonc(text, path!);
}

function toml(path: string): Record<string, unknown> | undefined {
  const text = readOrNull(path);
  return text === null ? undefined : (parseToml(text) as Record<string, unknown>);
}

const str = (v: unknown) => (typeof v === "string" ? v : undefined);
const authOf = (server: unknown) => str(getAt(server, ["headers", "Authorization"])) ?? str(getAt(server, ["http_headers", "Authorization"]));

/** Reads each client's entry the way setup writes it. */
function readEntry(id: string, ctx: SetupContext): Entry | undefined {
  switch (id) {
    case "claude-code": {
      const p = claudePaths(ctx);
      const s = getAt(json(p.mcp), ["mcpServers", SERVER_KEY]);
      if (s === undefined) return undefined;
      const allow = getAt(json(p.settings), ["permissions", "allow"]);
      return {
        url: str(getAt(s, ["url"])),
        authorization: authOf(s),
        headersHelper: str(getAt(s, ["headersHelper"])),
        permission: { present: Array.isArray(allow) && allow.includes(PERMISSION_RULE), what: `permissions.allow has ${PERMISSION_RULE} (${p.settings})` },
      };
    }
    case "codex": {
      const s = getAt(toml(codexPaths(ctx).config), ["mcp_servers", SERVER_KEY]);
      if (s === undefined) return undefined;
      return {
        url: str(getAt(s, ["url"])),
        authorization: authOf(s),
        tokenEnv: str(getAt(s, ["bearer_token_env_var"])),
        permission: { present: getAt(s, ["default_tools_approval_mode"]) === "approve", what: `mcp_servers.airlock.default_tools_approval_mode = "approve" (${codexPaths(ctx).config})` },
      };
    }
    case "cursor": {
      const s = getAt(json(cursorPaths(ctx).mcp), ["mcpServers", SERVER_KEY]);
      return s === undefined ? undefined : { url: str(getAt(s, ["url"])), authorization: authOf(s) };
    }
    case "gemini-cli": {
      const s = getAt(json(geminiPaths(ctx).settings), ["mcpServers", SERVER_KEY]);
      if (s === undefined) return undefined;
      return { url: str(getAt(s, ["httpUrl"])), authorization: authOf(s), permission: { present: getAt(s, ["trust"]) === true, what: `mcpServers.airlock.trust is true (${geminiPaths(ctx).settings})` } };
    }
    case "vscode": {
      const s = getAt(json(vscodePaths(ctx).mcp), ["servers", SERVER_KEY]);
      return s === undefined ? undefined : { url: str(getAt(s, ["url"])), authorization: authOf(s) };
    }
    case "copilot-cli": {
      const s = getAt(json(copilotPaths(ctx).mcp), ["mcpServers", SERVER_KEY]);
      return s === undefined ? undefined : { url: str(getAt(s, ["url"])), authorization: authOf(s) };
    }
    case "cline": {
      // The CLI's file (the extension's, when present, holds the same entry).
      const file = clinePaths(ctx).mcp[0];
      const s = file === undefined ? undefined : getAt(json(file), ["mcpServers", SERVER_KEY]);
      return s === undefined ? undefined : { url: str(getAt(s, ["url"])), authorization: authOf(s) };
    }
    case "kiro": {
      const p = kiroPaths(ctx);
      const s = getAt(json(p.mcp), ["mcpServers", SERVER_KEY]);
      if (s === undefined) return undefined;
      const allowed = getAt(json(p.agent), ["allowedTools"]);
      return { url: str(getAt(s, ["url"])), authorization: authOf(s), permission: { present: Array.isArray(allowed) && allowed.includes(`@${SERVER_KEY}`), what: `allowedTools has @${SERVER_KEY} (${p.agent})` } };
    }
    case "windsurf": {
      const s = getAt(json(windsurfPaths(ctx).mcp), ["mcpServers", SERVER_KEY]);
      return s === undefined ? undefined : { url: str(getAt(s, ["serverUrl"])), authorization: authOf(s) };
    }
    case "junie": {
      const s = getAt(json(juniePaths(ctx).mcp), ["mcpServers", SERVER_KEY]);
      const args = getAt(s, ["args"]);
      return s === undefined ? undefined : { stdio: [String(getAt(s, ["command"])), ...(Array.isArray(args) ? args.map(String) : [])] };
    }
    case "opencode": {
      const doc = json(opencodePaths(ctx).config);
      const s = getAt(doc, ["mcp", SERVER_KEY]) ?? getAt(doc, ["mcp", "servers", SERVER_KEY]);
      return s === undefined ? undefined : { url: str(getAt(s, ["url"])), authorization: authOf(s) };
    }
  }
  return CLIENTS.find((c) => c.id === id)?.mcpEntry?.(ctx);
}

/** Our hook commands in a client's hook file(s), found by their shape wherever they sit. */
function ourHookCommands(client: Client, ctx: SetupContext): string[] {
  const files = client.parts(ctx).filter((p) => p.what === "hooks").map((p) => p.path);
  const out = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      if (isOurHookCommand(v, client.id)) out.add(v.trim());
    } else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  for (const f of files) {
    const text = readOrNull(f);
    if (text === null) continue;
    try {
      walk(parseJsonc(text, f));
    } catch {
      // A script (Cline's hook files): its lines. A JSON file that does not parse is reported
      // by the config check.
      for (const line of text.split("\n")) walk(line);
    }
  }
  return [...out];
}

/**
 * The header value the client would send, resolved as the client resolves it; a string when it
 * cannot be known here (a VS Code input prompt), undefined when it sends none.
 *
 * A project's files come with the repository, so for them nothing is run and nothing is read but
 * what setup itself writes: a headersHelper is accepted only when it is exactly setup's (and then
 * evaluated here, not run), a reference only to AIRLOCK_TOKEN or the token file.
 */
function resolveAuth(e: Entry, env: Record<string, string | undefined>, ctx: SetupContext): { value?: string; unknown?: string; missingEnv?: string; foreign?: string } {
  const project = ctx.project !== undefined;
  if (e.headersHelper) {
    if (project) {
      if (e.headersHelper !== headersHelper(ctx)) return { foreign: `its headersHelper is not the one setup writes (\`${e.headersHelper}\`); doctor runs no command from a project's files` };
      const token = env.AIRLOCK_TOKEN || readOrNull(ctx.tokenPath)?.trim();
      return token ? { value: `Bearer ${token}` } : {};
    }
    const r = Bun.spawnSync(["/bin/sh", "-c", e.headersHelper], { env, stdout: "pipe", stderr: "pipe", timeout: 10_000 });
    try {
      return { value: str((JSON.parse(r.stdout.toString()) as Record<string, unknown>).Authorization) };
    } catch {
      return { unknown: `headersHelper printed no JSON (${r.stderr.toString().trim() || `exit ${r.exitCode}`})` };
    }
  }
  if (e.tokenEnv) {
    if (project && e.tokenEnv !== TOKEN_ENV) return { foreign: `it sends $${e.tokenEnv} as the token, not $${TOKEN_ENV}` };
    return env[e.tokenEnv] ? { value: `Bearer ${env[e.tokenEnv]}` } : { missingEnv: e.tokenEnv };
  }
  const a = e.authorization;
  if (a === undefined) return {};
  if (/\$\{input:/.test(a)) return { unknown: "the token is asked for by VS Code (input airlock-token)" };
  let missing: string | undefined;
  let foreign: string | undefined;
  const value = a
    .replace(/\{file:([^}]+)\}/g, (_, p: string) => {
      const path = p.replace(/^~(?=\/)/, env.HOME ?? "");
      if (project && path !== ctx.tokenPath) {
        foreign = `its Authorization reads ${p}, not the token file`;
        return "";
      }
      return readOrNull(path)?.trim() ?? "";
    })
    .replace(/\$\{env:([A-Za-z_]\w*)\}|\{env:([A-Za-z_]\w*)\}|\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)/g, (_, a1, a2, a3, a4) => {
      const name = a1 ?? a2 ?? a3 ?? a4;
      if (project && name !== TOKEN_ENV) {
        foreign = `its Authorization reads $${name}, not $${TOKEN_ENV}`;
        return "";
      }
      if (env[name] === undefined) missing = name;
      return env[name] ?? "";
    });
  if (foreign) return { foreign };
  return missing ? { missingEnv: missing } : { value };
}

async function post(url: string, authorization?: string): Promise<number | string> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "airlock-doctor", version: "1" } } }),
      signal: AbortSignal.timeout(3000),
    });
    await res.body?.cancel();
    return res.status;
  } catch (err) {
    return errorMessage(err);
  }
}

/** Whether an Airlock answers /healthz at this URL (discovery's own probe). */
async function healthy(url: string): Promise<boolean> {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return false;
  }
  return (await probe({ url: origin, unix: null, where: url, via: "--port" })) === "ok";
}

const sameDaemon = (a: string, b: string) => {
  try {
    const x = new URL(a);
    const y = new URL(b);
    const local = (h: string) => (h === "localhost" || h === "[::1]" || h === "127.0.0.1" ? "loopback" : h);
    return local(x.hostname) === local(y.hostname) && x.port === y.port;
  } catch {
    return false;
  }
};

async function checkClient(client: Client, ctx: SetupContext, o: { daemonUrl?: string; env: Record<string, string | undefined>; which(n: string): string | null }): Promise<Check[]> {
  const out: Check[] = [];
  const scope = ctx.project ? ` --project ${ctx.project}` : "";
  const setupAgain = `airlock setup ${client.id}${scope}`;
  const label = `${client.name}${ctx.project ? ` (project ${ctx.project})` : ""}`;
  const parts = client.parts(ctx);
  let have: string[];
  try {
    have = installedParts(parts);
  } catch (err) {
    return [{ ok: false, what: `${label}: ${errorMessage(err)}`, fix: `fix the file, then ${setupAgain}` }];
  }
  // The permission rule has a check of its own below.
  const missing = parts.map((p) => p.what).filter((w) => !have.includes(w) && w !== "permission");
  out.push(missing.length ? { ok: false, what: `${label}: ${missing.join(", ")} missing (has ${have.join(", ")})`, fix: setupAgain } : { ok: true, what: `${label}: ${have.join(", ")} in place` });

  // The hook command, as the client runs it. A project's file came with the repository: its
  // commands are compared with what setup writes, never run; only setup's own command is.
  const hookCmds = ourHookCommands(client, ctx);
  const expected = new Set(HOOK_EVENTS.map((e) => hookCommand(ctx, client.id, e)));
  const foreignHooks = ctx.project ? hookCmds.filter((c) => !expected.has(c)) : [];
  for (const c of foreignHooks) {
    out.push({ ok: "warn", what: `${label}: hook command \`${c}\` is not the one setup writes (\`${ctx.airlock} hook ${client.id} …\`); doctor runs no command from a project's files`, fix: setupAgain });
  }
  // Each event setup writes: a file from an older setup lacks the newer ones (post-tool and prompt
  // came with message delivery), and the client then simply never runs them.
  if (client.hookEvents && have.includes("hooks")) {
    const found = new Set(hookCmds.map((c) => c.split(/\s+/).at(-1)));
    const absent = client.hookEvents.filter((e) => !found.has(e));
    if (absent.length) {
      out.push({ ok: false, what: `${label}: no hook for ${absent.join(", ")} (an older setup?)${absent.includes("post-tool") || absent.includes("prompt") ? ": other agents' messages do not reach the model" : ""}`, fix: setupAgain });
    }
  }
  const toVerify = ctx.project ? (hookCmds.length > foreignHooks.length ? [ctx.airlock] : []) : [...new Set(hookCmds.map(commandOfHook))];
  for (const cmd of toVerify) {
    const r = verifyCommand(cmd, o.env);
    out.push(
      r.ok
        ? { ok: true, what: `${label}: hook command \`${cmd}\` runs (${r.output})` }
        : { ok: false, what: `${label}: hook command \`${cmd} version\` fails (${r.output}): every hook fails open`, fix: `put airlock on PATH (install.sh or Homebrew), then ${setupAgain}` },
    );
  }

  // OpenCode's plugin runs `airlock hook opencode …` with the command setup wrote into it.
  if (client.id === "opencode" && have.includes("plugin")) {
    if (readOrNull(opencodePluginPath(ctx)) !== opencodePluginSource(ctx.airlock)) {
      out.push({ ok: "warn", what: `${label}: the plugin ${opencodePluginPath(ctx)} is not the one this setup writes (an older setup, or another airlock command)`, fix: setupAgain });
    } else if (!ctx.project) {
      const r = verifyCommand(ctx.airlock, o.env);
      out.push(r.ok ? { ok: true, what: `${label}: the plugin's command \`${ctx.airlock}\` runs (${r.output})` } : { ok: false, what: `${label}: the plugin's command \`${ctx.airlock} version\` fails (${r.output}): every check fails open`, fix: `put airlock on PATH, then ${setupAgain}` });
    }
  }

  // The MCP URL, and the token the client sends there.
  let entry: Entry | undefined;
  try {
    entry = readEntry(client.id, ctx);
  } catch (err) {
    out.push({ ok: false, what: `${label}: ${errorMessage(err)}`, fix: setupAgain });
  }
  // The token goes to the daemon this CLI found and nowhere else: an entry pointing elsewhere is
  // reported, not contacted (a project's file could name any URL).
  if (entry?.url) {
    if (!o.daemonUrl) {
      out.push({ ok: "warn", what: `${label}: cannot check its MCP URL ${entry.url}: the daemon is found over its socket only, so its TCP URL is not known here` });
    } else if (!sameDaemon(entry.url, o.daemonUrl)) {
      if (ctx.project && sameDaemon(entry.url, ctx.url)) {
        out.push({ ok: "warn", what: `${label}: the project's MCP config points at ${entry.url} (the default port, for every teammate), but your daemon runs at ${o.daemonUrl}`, fix: `your own entry is what should point there: airlock setup ${client.id} (user scope), or run the daemon on the default port` });
      } else {
        out.push({ ok: ctx.project ? "warn" : false, what: `${label}: its MCP config points at ${entry.url}, but this daemon runs at ${o.daemonUrl} (nothing was sent there)`, fix: setupAgain });
      }
    } else if (!(await healthy(o.daemonUrl))) {
      out.push({ ok: false, what: `${label}: nothing answers at ${entry.url} (the URL in its MCP config)`, fix: `start the daemon (airlock install-service), or if it runs elsewhere: ${setupAgain}` });
    } else {
      out.push({ ok: true, what: `${label}: reaches the daemon at ${entry.url}` });
      const auth = resolveAuth(entry, o.env, ctx);
      if (auth.foreign) out.push({ ok: "warn", what: `${label}: token not checked: ${auth.foreign}`, fix: setupAgain });
      else if (auth.missingEnv) {
        out.push({ ok: "warn", what: `${label}: sends the token from $${auth.missingEnv}, which is not set in this shell`, fix: `export ${auth.missingEnv}="$(cat ${ctx.tokenPath})" in your shell profile, and start ${client.name} from such a shell` });
      } else if (auth.unknown) out.push({ ok: "warn", what: `${label}: cannot check the token: ${auth.unknown}` });
      else {
        const status = await post(o.daemonUrl, auth.value);
        if (status === 200) out.push({ ok: true, what: `${label}: the daemon accepts the token it sends` });
        else if (status === 401) {
          const fix = entry.headersHelper || entry.tokenEnv ? `the daemon's token is ${ctx.tokenPath}: unset a stale AIRLOCK_TOKEN, or ${setupAgain}` : setupAgain;
          out.push({ ok: false, what: `${label}: the daemon refuses its token (401)${auth.value ? "" : ": it sends none"}`, fix });
        }
        else out.push({ ok: "warn", what: `${label}: a test call answered ${status}` });
      }
    }
  }
  // A stdio entry: the bridge finds the daemon as this CLI does, so what can break is its command.
  if (entry?.stdio) {
    const [cmd, ...args] = entry.stdio;
    const bridge = [cmd!, ...args.filter((a) => a !== "mcp")].map(shellQuote).join(" ");
    if (args.at(-1) !== "mcp") out.push({ ok: false, what: `${label}: its MCP entry runs \`${entry.stdio.join(" ")}\`, not \`airlock mcp\``, fix: setupAgain });
    else if (ctx.project && bridge !== "airlock") out.push({ ok: "warn", what: `${label}: the project's stdio entry runs \`${bridge} mcp\`, not \`airlock mcp\`; doctor runs no command from a project's files`, fix: setupAgain });
    else {
      const r = verifyCommand(bridge, o.env);
      out.push(r.ok ? { ok: true, what: `${label}: its stdio server \`${bridge} mcp\` runs (${r.output})` } : { ok: false, what: `${label}: its stdio server \`${bridge} version\` fails (${r.output})`, fix: `put airlock on PATH (install.sh or Homebrew), then ${setupAgain}` });
    }
  }
  if (entry?.permission) {
    out.push(entry.permission.present ? { ok: true, what: `${label}: ${entry.permission.what}` } : { ok: false, what: `${label}: no rule lets the agent call Airlock without a prompt (want ${entry.permission.what}); headless runs refuse the calls`, fix: setupAgain });
  }

  // Codex: are our hooks trusted? (Untrusted hooks are skipped without a word.)
  if (client.id === "codex" && hookCmds.length > 0) {
    const codex = o.which("codex");
    if (!codex) out.push({ ok: "warn", what: `${label}: cannot ask Codex whether it trusts the hooks (no \`codex\` on PATH)`, fix: `after installing Codex: ${setupAgain}` });
    else {
      try {
        const hooks = await listCodexHooks({ codex, cwd: ctx.project ?? ctx.home, hooksFile: codexPaths(ctx).hooks, env: o.env });
        const bad = hooks.filter((h) => h.trustStatus !== "trusted" && h.trustStatus !== "managed");
        if (hooks.length === 0) out.push({ ok: false, what: `${label}: Codex lists none of the airlock hooks`, fix: ctx.project ? `trust the project in Codex, then ${setupAgain}` : setupAgain });
        else if (bad.length) out.push({ ok: false, what: `${label}: Codex does not trust ${bad.map((h) => `${h.eventName} (${h.trustStatus})`).join(", ")}: it skips them`, fix: `${setupAgain} (or open /hooks in Codex)` });
        else out.push({ ok: true, what: `${label}: Codex trusts the ${hooks.length} airlock hooks` });
      } catch (err) {
        out.push({ ok: "warn", what: `${label}: cannot ask Codex about hook trust: ${errorMessage(err)}` });
      }
    }
  }
  return out;
}

/**
 * Checks every configured client (user scope, and the project in `cwd` when setup wrote there).
 * `daemonUrl` is where this CLI finds the running daemon; a client pointing elsewhere fails.
 */
export async function clientChecks(o: { daemonUrl?: string; cwd?: string; env?: Record<string, string | undefined>; which?: (n: string) => string | null } = {}): Promise<Check[]> {
  const env = o.env ?? process.env;
  const which = o.which ?? ((n: string) => Bun.which(n));
  const endpoint = daemonEndpoint();
  const daemonUrl = o.daemonUrl ?? (endpoint.unix ? undefined : endpoint.url);
  const out: Check[] = [];
  const cwd = o.cwd ?? process.cwd();
  const scopes = [setupContext(), ...(existsSync(cwd) && cwd !== setupContext().home ? [setupContext({ project: cwd })] : [])];
  for (const ctx of scopes) {
    for (const client of CLIENTS) {
      const parts = client.parts(ctx);
      if (parts.length === 0) continue;
      let configured = false;
      try {
        configured = installedParts(parts).length > 0;
      } catch {
        configured = true; // a file that does not parse: checkClient says so
      }
      if (!configured) continue;
      out.push(...(await checkClient(client, ctx, { daemonUrl, env, which })));
    }
  }
  if (out.length === 0) out.push({ ok: "warn", what: "no agent client is set up for Airlock", fix: "airlock setup (lists the clients), then airlock setup <client>" });
  return out;
}
