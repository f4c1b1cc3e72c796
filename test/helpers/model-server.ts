// A scripted model on 127.0.0.1, so the live tests can drive the real Claude Code, Codex and Gemini
// CLIs with no network: it speaks the Anthropic Messages API (POST /v1/messages, streaming SSE, and
// /v1/messages/count_tokens), the OpenAI Responses API (POST /responses, streaming SSE) and the
// Gemini API (POST /v1beta/models/<model>:streamGenerateContent?alt=sse; the one-shot
// :generateContent and :countTokens calls a client makes on the side are answered too) and the
// OpenAI Chat Completions API (POST /chat/completions, streaming SSE: what OpenCode's
// OpenAI-compatible providers speak). A
// test gives it a script, a function from what the model has been shown so far to its next turn
// (text, or tool calls), and reads back every request it received, so it can assert what reached
// the model (a SessionStart context, a hook's denial inside a tool result).
//
// The three wires are normalised to one view (ModelRequest): the system text, the conversation as
// role/part items, the tool results by call id, the tools offered. Unknown fields, betas and
// tools are ignored, never refused: the CLIs add new ones in every release.
import type { Server } from "bun";

/**
 * One tool call the model makes. `input` as a string is a freeform (custom) tool call: Codex's
 * apply_patch. On the Responses API, `namespace` makes a namespaced function call (Codex names an
 * MCP tool `claim_paths` in namespace `mcp__airlock`), and `kind: "tool_search"` is Codex's
 * client-side search over deferred tools (MCP tools are offered only through it). On the Gemini
 * API a call is a `functionCall {name, args}` (Gemini CLI names an MCP tool `mcp_airlock_claim_paths`).
 */
export interface ToolCall {
  name: string;
  input: Record<string, unknown> | string;
  namespace?: string;
  kind?: "tool_search";
  /** Made up when absent (toolu_… / call_…). */
  id?: string;
}

/** The model's next turn: text (the turn ends), or tool calls (the client runs them and comes back). */
export type Turn = ({ text: string; tools?: undefined } | { text?: string; tools: ToolCall[] }) & {
  /** Input tokens reported in the usage (default 10): a large figure makes a client think its context is full and compact. */
  inputTokens?: number;
};

export interface ToolResult {
  id: string;
  /** The tool's name, when the call is in the same request (it always is: the history is resent). */
  name?: string;
  /** The call's input (parsed JSON, or the raw string of a freeform call). */
  input?: unknown;
  text: string;
  isError: boolean;
}

/** One part of the conversation the model is shown, in order. */
export type Item =
  | { kind: "text"; role: "user" | "assistant" | "developer" | "system"; text: string }
  | { kind: "call"; id: string; name: string; input: unknown }
  | { kind: "result"; id: string; text: string; isError: boolean };

export interface ModelRequest {
  api: "anthropic" | "openai" | "gemini" | "chat";
  /** 1-based, in arrival order, over every API. */
  seq: number;
  path: string;
  headers: Record<string, string>;
  body: any;
  /** The system prompt / instructions. */
  system: string;
  items: Item[];
  /** Names of the tools offered to the model. */
  tools: string[];
  /** Every text the model is shown in this request, joined: system, messages, tool calls and results. */
  all: string;
  results: ToolResult[];
  /** The latest user text (not a tool result), and the model turns since then. */
  lastUserText: string;
  turnsSinceUser: number;
  /** What the script answered (set once it has). */
  reply?: Turn;
}

export type Script = (req: ModelRequest) => Turn | Promise<Turn>;

export interface ModelServer {
  /** http://127.0.0.1:PORT (no trailing slash). */
  url: string;
  port: number;
  /**
   * Every model request (POST /v1/messages, POST /responses, POST /chat/completions, POST …:streamGenerateContent), in
   * order. count_tokens, countTokens, GETs and Gemini's one-shot :generateContent side calls
   * (its model router, its checks; never the agent's turn) are in `other`.
   */
  requests: ModelRequest[];
  other: { method: string; path: string; body?: any }[];
  /** Replaces the script. */
  script(s: Script): void;
  /** Errors the script threw (the client gets a 500 and the test should fail on these). */
  errors: string[];
  stop(): Promise<void>;
}

// --- normalising the wires ----------------------------------------------------------------

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content
    .map((b: any) => {
      if (typeof b === "string") return b;
      if (typeof b?.text === "string") return b.text;
      if (b?.type === "tool_result") return textOf(b.content);
      return "";
    })
    .filter((t) => t !== "")
    .join("\n");
}

function parseMaybeJson(s: unknown): unknown {
  if (typeof s !== "string") return s;
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

function anthropicItems(body: any): { system: string; items: Item[] } {
  const system = typeof body.system === "string" ? body.system : textOf(body.system);
  const items: Item[] = [];
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    // Claude Code 2.1.332 sends hook context as role "system" messages inside `messages`.
    const role = m.role === "assistant" ? "assistant" : m.role === "system" ? "system" : "user";
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? m.content : [];
    for (const b of blocks) {
      if (b?.type === "text" && typeof b.text === "string") items.push({ kind: "text", role, text: b.text });
      else if (b?.type === "tool_use") items.push({ kind: "call", id: String(b.id), name: String(b.name), input: b.input });
      else if (b?.type === "tool_result") items.push({ kind: "result", id: String(b.tool_use_id), text: textOf(b.content), isError: b.is_error === true });
    }
  }
  return { system, items };
}

function openaiItems(body: any): { system: string; items: Item[] } {
  const system = typeof body.instructions === "string" ? body.instructions : "";
  const items: Item[] = [];
  const input = typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : Array.isArray(body.input) ? body.input : [];
  for (const it of input) {
    const type = it?.type ?? (it?.role ? "message" : undefined);
    if (type === "message") {
      const role = ["user", "assistant", "developer", "system"].includes(it.role) ? it.role : "user";
      const text = textOf(it.content);
      if (text !== "") items.push({ kind: "text", role, text });
    } else if (type === "function_call") {
      const name = it.namespace ? `${it.namespace}__${it.name}` : String(it.name);
      items.push({ kind: "call", id: String(it.call_id), name, input: parseMaybeJson(it.arguments) });
    } else if (type === "tool_search_call") {
      items.push({ kind: "call", id: String(it.call_id), name: "tool_search", input: it.arguments });
    } else if (type === "tool_search_output") {
      items.push({ kind: "result", id: String(it.call_id), text: JSON.stringify(it.tools ?? it.output ?? it), isError: false });
    } else if (type === "custom_tool_call") {
      items.push({ kind: "call", id: String(it.call_id), name: String(it.name), input: it.input });
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      const out = it.output;
      const text = typeof out === "string" ? out : typeof out?.content === "string" ? out.content : textOf(out?.content ?? out);
      items.push({ kind: "result", id: String(it.call_id), text, isError: out?.success === false });
    }
  }
  return { system, items };
}

/** Chat Completions' `messages`: system/user/assistant (with tool_calls) and tool (tool_call_id). */
function chatItems(body: any): { system: string; items: Item[] } {
  const systems: string[] = [];
  const items: Item[] = [];
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    const text = textOf(m?.content);
    if (m?.role === "system" || m?.role === "developer") {
      if (items.length === 0) systems.push(text);
      else items.push({ kind: "text", role: "system", text });
    } else if (m?.role === "tool") items.push({ kind: "result", id: String(m.tool_call_id), text, isError: false });
    else {
      const role = m?.role === "assistant" ? "assistant" : "user";
      if (text !== "") items.push({ kind: "text", role, text });
      for (const c of Array.isArray(m?.tool_calls) ? m.tool_calls : []) {
        items.push({ kind: "call", id: String(c.id), name: String(c.function?.name), input: parseMaybeJson(c.function?.arguments) });
      }
    }
  }
  return { system: systems.join("\n"), items };
}

/**
 * Gemini's `contents`: role "user" or "model", each with parts: `text`, `functionCall {name, args,
 * id?}` (a model turn), `functionResponse {name, response, id?}` (the client's answer, in the next
 * "user" content). Gemini CLI 0.61.0 gives a call the model sent without an id one of its own
 * (`write_file_<ms>_<n>`), puts it on the functionCall it resends and on the functionResponse; a
 * call with no id at all gets `<name>#<n>` (its n-th call of that name) here, and a response
 * without one takes the oldest unanswered call of its name. (On resume Gemini CLI 0.61.0 resends
 * each functionResponse twice: the same id, the same result.) A `thought: true` part is the
 * model's reasoning, not shown text.
 */
function geminiItems(body: any): { system: string; items: Item[] } {
  const system = textOf(body.systemInstruction?.parts ?? body.systemInstruction);
  const items: Item[] = [];
  const seen = new Map<string, number>();
  const open = new Map<string, string[]>();
  const ids = new Set<string>();
  for (const c of Array.isArray(body.contents) ? body.contents : []) {
    const role = c?.role === "model" ? "assistant" : "user";
    for (const p of Array.isArray(c?.parts) ? c.parts : []) {
      if (typeof p?.text === "string" && p.thought !== true) items.push({ kind: "text", role, text: p.text });
      else if (p?.functionCall) {
        const name = String(p.functionCall.name);
        const n = (seen.get(name) ?? 0) + 1;
        seen.set(name, n);
        const id = typeof p.functionCall.id === "string" && p.functionCall.id !== "" ? p.functionCall.id : `${name}#${n}`;
        open.set(name, [...(open.get(name) ?? []), id]);
        ids.add(id);
        items.push({ kind: "call", id, name, input: p.functionCall.args ?? {} });
      } else if (p?.functionResponse) {
        const name = String(p.functionResponse.name);
        const waiting = open.get(name) ?? [];
        const given = typeof p.functionResponse.id === "string" && p.functionResponse.id !== "" ? p.functionResponse.id : undefined;
        const id = given && ids.has(given) ? given : (waiting[0] ?? given ?? `${name}#?`);
        open.set(name, waiting.filter((x) => x !== id));
        const response = p.functionResponse.response ?? {};
        // Gemini CLI puts a tool's text in response.output, a failure in response.error.
        const text = typeof response.output === "string" ? response.output : typeof response.error === "string" ? response.error : JSON.stringify(response);
        items.push({ kind: "result", id, text, isError: response.error !== undefined });
      }
    }
  }
  return { system, items };
}

function toolNames(body: any): string[] {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return tools
    .flatMap((t: any) => (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations.map((d: any) => d?.name) : [t?.name ?? t?.function?.name ?? t?.type]))
    .map((n: unknown) => String(n ?? ""))
    .filter((n: string) => n !== "");
}

function view(api: ModelRequest["api"], seq: number, req: Request, path: string, body: any): ModelRequest {
  const { system, items } = api === "anthropic" ? anthropicItems(body) : api === "openai" ? openaiItems(body) : api === "chat" ? chatItems(body) : geminiItems(body);
  const calls = new Map<string, { name: string; input: unknown }>();
  for (const it of items) if (it.kind === "call") calls.set(it.id, { name: it.name, input: it.input });
  const results: ToolResult[] = items
    .filter((it): it is Extract<Item, { kind: "result" }> => it.kind === "result")
    .map((r) => ({ id: r.id, name: calls.get(r.id)?.name, input: calls.get(r.id)?.input, text: r.text, isError: r.isError }));
  // The latest block of user text (a prompt, with whatever the client put next to it), and how
  // many model turns followed it. Tool results and system/developer text do not end a block.
  const isModel = (it: Item) => it.kind === "call" || (it.kind === "text" && it.role === "assistant");
  let end = items.length;
  let turnsSinceUser = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind === "text" && it.role === "user") break;
    if (isModel(it) && (i === items.length - 1 || !isModel(items[i + 1]!))) turnsSinceUser++;
    end = i;
  }
  let start = end;
  while (start > 0) {
    const it = items[start - 1]!;
    if (isModel(it)) break;
    start--;
  }
  const lastUserText = items
    .slice(start, end)
    .filter((it): it is Extract<Item, { kind: "text" }> => it.kind === "text" && it.role === "user")
    .map((it) => it.text)
    .join("\n");
  const all = [
    system,
    ...items.map((it) => (it.kind === "text" ? it.text : it.kind === "call" ? `${it.name} ${typeof it.input === "string" ? it.input : JSON.stringify(it.input)}` : it.text)),
  ].join("\n");
  const headers: Record<string, string> = {};
  req.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { api, seq, path, headers, body, system, items, tools: toolNames(body), all, results, lastUserText, turnsSinceUser };
}

// --- answering ----------------------------------------------------------------------------------

const sse = (events: { type: string }[]) =>
  new Response(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });

let idCounter = 0;
const newId = (prefix: string) => `${prefix}${Date.now().toString(36)}${(++idCounter).toString(36).padStart(4, "0")}`;

function anthropicAnswer(body: any, turn: Turn): Response {
  const model = typeof body.model === "string" ? body.model : "claude-scripted";
  const blocks: any[] = [];
  if (turn.text) blocks.push({ type: "text", text: turn.text });
  for (const t of turn.tools ?? []) blocks.push({ type: "tool_use", id: t.id ?? newId("toolu_"), name: t.name, input: typeof t.input === "string" ? { input: t.input } : t.input });
  const stop_reason = turn.tools?.length ? "tool_use" : "end_turn";
  const usage = { input_tokens: turn.inputTokens ?? 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const id = newId("msg_");
  if (body.stream !== true) {
    return Response.json({ id, type: "message", role: "assistant", model, content: blocks, stop_reason, stop_sequence: null, usage });
  }
  const events: any[] = [{ type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }];
  blocks.forEach((b, index) => {
    if (b.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: b.text } });
    } else {
      events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { input_tokens: usage.input_tokens, output_tokens: 10 } });
  events.push({ type: "message_stop" });
  return sse(events);
}

function openaiAnswer(turn: Turn): Response {
  const rid = newId("resp_");
  const items: any[] = [];
  if (turn.text) items.push({ type: "message", role: "assistant", id: newId("msg_"), status: "completed", content: [{ type: "output_text", text: turn.text, annotations: [] }] });
  for (const t of turn.tools ?? []) {
    const call_id = t.id ?? newId("call_");
    if (t.kind === "tool_search") items.push({ type: "tool_search_call", id: newId("ts_"), status: "completed", call_id, execution: "client", arguments: t.input });
    else if (typeof t.input === "string") items.push({ type: "custom_tool_call", id: newId("ctc_"), status: "completed", call_id, name: t.name, input: t.input });
    else items.push({ type: "function_call", id: newId("fc_"), status: "completed", call_id, ...(t.namespace ? { namespace: t.namespace } : {}), name: t.name, arguments: JSON.stringify(t.input) });
  }
  const events: any[] = [{ type: "response.created", response: { id: rid, status: "in_progress" } }];
  items.forEach((item, output_index) => {
    events.push({ type: "response.output_item.added", output_index, item: item.type === "message" ? { ...item, content: [] } : item });
    if (item.type === "message") events.push({ type: "response.output_text.delta", output_index, content_index: 0, item_id: item.id, delta: item.content[0].text });
    events.push({ type: "response.output_item.done", output_index, item });
  });
  events.push({
    type: "response.completed",
    response: {
      id: rid,
      status: "completed",
      usage: { input_tokens: turn.inputTokens ?? 10, input_tokens_details: null, output_tokens: 10, output_tokens_details: null, total_tokens: (turn.inputTokens ?? 10) + 10 },
    },
  });
  return sse(events);
}

/** Chat Completions streaming: `data:` chunks (role, text, tool_calls), a finish chunk with the usage, `data: [DONE]`. */
function chatAnswer(body: any, turn: Turn): Response {
  const id = newId("chatcmpl_");
  const model = typeof body.model === "string" ? body.model : "scripted";
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: any, finish_reason: string | null, extra: Record<string, unknown> = {}) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason }],
    ...extra,
  });
  const chunks: any[] = [chunk({ role: "assistant", content: "" }, null)];
  if (turn.text) chunks.push(chunk({ content: turn.text }, null));
  (turn.tools ?? []).forEach((t, index) => {
    const args = typeof t.input === "string" ? JSON.stringify({ input: t.input }) : JSON.stringify(t.input);
    chunks.push(chunk({ tool_calls: [{ index, id: t.id ?? newId("call_"), type: "function", function: { name: t.name, arguments: args } }] }, null));
  });
  const usage = { prompt_tokens: turn.inputTokens ?? 10, completion_tokens: 10, total_tokens: (turn.inputTokens ?? 10) + 10 };
  chunks.push(chunk({}, turn.tools?.length ? "tool_calls" : "stop", { usage }));
  if (body.stream !== true) {
    const tool_calls = (turn.tools ?? []).map((t) => ({ id: t.id ?? newId("call_"), type: "function", function: { name: t.name, arguments: JSON.stringify(t.input) } }));
    const message = { role: "assistant", content: turn.text ?? "", ...(tool_calls.length ? { tool_calls } : {}) };
    return Response.json({ id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: tool_calls.length ? "tool_calls" : "stop" }], usage });
  }
  const text = [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), "data: [DONE]\n\n"].join("");
  return new Response(text, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

/**
 * Gemini's streamGenerateContent with alt=sse: `data:` lines only, each a GenerateContentResponse.
 * A text chunk, then the function calls, then a last chunk with the finishReason and the usage.
 */
function geminiAnswer(path: string, turn: Turn): Response {
  const modelVersion = /models\/([^:/]+)/.exec(path)?.[1] ?? "gemini-scripted";
  const responseId = newId("gem_");
  const usageMetadata = { promptTokenCount: turn.inputTokens ?? 10, candidatesTokenCount: 10, totalTokenCount: (turn.inputTokens ?? 10) + 10 };
  const chunk = (parts: any[], last: boolean) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
    ...(last ? { usageMetadata } : {}),
    modelVersion,
    responseId,
  });
  const chunks: any[] = [];
  if (turn.text) chunks.push([{ text: turn.text }]);
  const calls = (turn.tools ?? []).map((t) => ({ functionCall: { ...(t.id ? { id: t.id } : {}), name: t.name, args: typeof t.input === "string" ? { input: t.input } : t.input } }));
  if (calls.length) chunks.push(calls);
  if (chunks.length === 0) chunks.push([{ text: "" }]);
  const body = chunks.map((parts, i) => `data: ${JSON.stringify(chunk(parts, i === chunks.length - 1))}\r\n\r\n`).join("");
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

/**
 * Gemini CLI's one-shot side calls (`:generateContent`, not the agent's turn): its model router
 * asks for a JSON complexity score, and other checks ask for JSON to a schema. The answer is an
 * empty JSON object, which fails their schema: the CLI falls back to its defaults (the configured
 * model, no extra turn) and goes on.
 */
function geminiSideAnswer(path: string): Response {
  const modelVersion = /models\/([^:/]+)/.exec(path)?.[1] ?? "gemini-scripted";
  return Response.json({
    candidates: [{ content: { role: "model", parts: [{ text: "{}" }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1, totalTokenCount: 11 },
    modelVersion,
  });
}

/** A few readable lines per request: what the model was last told, and what it answered. */
export function transcript(requests: ModelRequest[]): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s).replaceAll("\n", "\\n");
  return requests
    .map((r) => {
      const last = r.items.slice(r.items.findLastIndex((it) => it.kind === "call" || (it.kind === "text" && it.role === "assistant")) + 1);
      const told = last.map((it) => (it.kind === "result" ? `  result ${r.results.find((x) => x.id === it.id)?.name ?? it.id}${it.isError ? " (error)" : ""}: ${cut(it.text, 600)}` : it.kind === "text" ? `  ${it.role}: ${cut(it.text, 300)}` : ""));
      const reply = r.reply ? (r.reply.tools?.length ? r.reply.tools.map((t) => `${t.namespace ? `${t.namespace}__` : ""}${t.name} ${cut(typeof t.input === "string" ? t.input : JSON.stringify(t.input), 200)}`).join("; ") : cut(r.reply.text ?? "", 200)) : "(no answer)";
      return [`#${r.seq} ${r.api} ${r.path}`, ...told.filter((l) => l !== ""), `  => ${reply}`].join("\n");
    })
    .join("\n");
}

/** Starts the scripted model on 127.0.0.1 (a free port). */
export function startModelServer(initial: Script = () => ({ text: "ok" })): ModelServer {
  let script = initial;
  const requests: ModelRequest[] = [];
  const other: { method: string; path: string; body?: any }[] = [];
  const errors: string[] = [];
  let seq = 0;
  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // A scripted answer is immediate; a client that keeps a stream open waits on nothing of ours.
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      if (req.method !== "POST") {
        other.push({ method: req.method, path });
        return new Response("not found", { status: 404 });
      }
      let body: any;
      try {
        body = await req.json();
      } catch {
        other.push({ method: req.method, path });
        return Response.json({ type: "error", error: { type: "invalid_request_error", message: "body is not JSON" } }, { status: 400 });
      }
      if (path.endsWith("/messages/count_tokens")) {
        other.push({ method: req.method, path });
        return Response.json({ input_tokens: Math.ceil(JSON.stringify(body).length / 4) });
      }
      if (path.endsWith(":countTokens")) {
        other.push({ method: req.method, path });
        return Response.json({ totalTokens: Math.ceil(JSON.stringify(body).length / 4) });
      }
      if (path.endsWith(":generateContent")) {
        other.push({ method: req.method, path, body });
        return geminiSideAnswer(path);
      }
      const api = path.endsWith("/messages")
        ? "anthropic"
        : path.endsWith("/responses")
          ? "openai"
          : path.endsWith("/chat/completions")
            ? "chat"
            : path.endsWith(":streamGenerateContent")
              ? "gemini"
              : undefined;
      if (!api) {
        other.push({ method: req.method, path });
        return new Response("not found", { status: 404 });
      }
      const r = view(api, ++seq, req, path, body);
      requests.push(r);
      let turn: Turn;
      try {
        turn = await script(r);
        r.reply = turn;
      } catch (err) {
        const msg = `request ${r.seq}: ${err instanceof Error ? err.message : String(err)}`;
        errors.push(msg);
        return Response.json({ type: "error", error: { type: "api_error", message: `scripted model: ${msg}` } }, { status: 500 });
      }
      return api === "anthropic" ? anthropicAnswer(body, turn) : api === "openai" ? openaiAnswer(turn) : api === "chat" ? chatAnswer(body, turn) : geminiAnswer(path, turn);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    requests,
    other,
    errors,
    script(s) {
      script = s;
    },
    async stop() {
      await server.stop(true);
    },
  };
}
