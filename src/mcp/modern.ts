// The MCP 2026-07-28 era, next to the 2025 era on the same POST /. A request is modern when
// its params._meta carries io.modelcontextprotocol/protocolVersion (or its method exists only
// in this era: server/discover, subscriptions/listen). Here the envelope and the routing
// headers are checked, in the order the conformance suite probes them (missing _meta field,
// header mismatch, unsupported version, missing client capability, unknown method), and every
// result gets resultType and the serverInfo _meta. The 2025 path never enters this file.
import { VERSION } from "../version.ts";
import { INSTRUCTIONS } from "./instructions.ts";
import { TOOL_LIST } from "./tools/index.ts";
import { MODERN_VERSION, PROTOCOL_VERSIONS } from "./versions.ts";

export { MODERN_VERSION };
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
export const TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks";

// Error codes of the 2026-07-28 revision (its reserved range -32020..-32099).
export const HEADER_MISMATCH = -32020;
export const MISSING_CLIENT_CAPABILITY = -32021;
export const UNSUPPORTED_VERSION = -32022;

/**
 * How long a client may cache tools/list and server/discover: the list changes only when the
 * daemon is upgraded (and so restarted); ten minutes bounds how long an upgraded daemon's new
 * tools stay unseen. "public": the answer is the same for every caller.
 */
export const LIST_TTL_MS = 600_000;
export const CACHE_SCOPE = "public";

/** Methods that exist only in this era: a request for one is modern even without _meta. */
const MODERN_ONLY = new Set(["server/discover", "subscriptions/listen"]);

export type Era = "2025" | typeof MODERN_VERSION;

/** Whether this request is in the 2026-07-28 era (IFACE rule 1). */
export function isModern(method: string, params: Record<string, unknown>): boolean {
  const meta = params._meta;
  if (typeof meta === "object" && meta !== null && META_PROTOCOL_VERSION in meta) return true;
  return MODERN_ONLY.has(method);
}

/** What a valid modern envelope tells the dispatcher. */
export interface ModernEnvelope {
  /** The client's declared capabilities for this request (an object, maybe empty). */
  capabilities: Record<string, unknown>;
  /** The keys of clientCapabilities.extensions (IFACE rule 1). */
  extensions: ReadonlySet<string>;
}

export interface ModernError {
  status: number;
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

const serverInfo = { name: "airlock", version: VERSION };
const RESULT_META = { [META_SERVER_INFO]: serverInfo };

/**
 * Checks the envelope and the headers of a modern request. Header names are case-insensitive
 * (Headers does that), values case-sensitive, with surrounding whitespace trimmed, and a value
 * in RFC 2047 style `=?base64?…?=` decoded first (the spec's form for non-ASCII names).
 */
export function checkEnvelope(method: string, params: Record<string, unknown>, headers: Headers | undefined): ModernEnvelope | ModernError {
  const meta = params._meta;
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) {
    return invalid(`invalid params: a ${MODERN_VERSION} request needs params._meta with ${META_PROTOCOL_VERSION} and ${META_CLIENT_CAPABILITIES}`);
  }
  const m = meta as Record<string, unknown>;
  const version = m[META_PROTOCOL_VERSION];
  if (typeof version !== "string" || version === "") return invalid(`invalid params: _meta needs ${META_PROTOCOL_VERSION} (a string)`);
  const caps = m[META_CLIENT_CAPABILITIES];
  if (typeof caps !== "object" || caps === null || Array.isArray(caps)) return invalid(`invalid params: _meta needs ${META_CLIENT_CAPABILITIES} (an object)`);

  const mismatch =
    headerMismatch(headers, "mcp-protocol-version", version) ??
    headerMismatch(headers, "mcp-method", method) ??
    (method === "tools/call" || method === "prompts/get" ? headerMismatch(headers, "mcp-name", params.name) : null) ??
    (method === "resources/read" ? headerMismatch(headers, "mcp-name", params.uri) : null);
  if (mismatch) return { status: 400, code: HEADER_MISMATCH, message: mismatch };

  if (version !== MODERN_VERSION) {
    return {
      status: 400,
      code: UNSUPPORTED_VERSION,
      message: `unsupported protocol version: ${version} (this server speaks ${MODERN_VERSION} per request, and the 2025 versions through initialize)`,
      data: { supported: [MODERN_VERSION], requested: version },
    };
  }
  const ext = (caps as Record<string, unknown>).extensions;
  const extensions = typeof ext === "object" && ext !== null && !Array.isArray(ext) ? new Set(Object.keys(ext)) : EMPTY;
  return { capabilities: caps as Record<string, unknown>, extensions };
}

const EMPTY: ReadonlySet<string> = new Set();

const invalid = (message: string): ModernError => ({ status: 400, code: -32602, message });

/** Null when the header carries exactly the body's value; else what is wrong. */
function headerMismatch(headers: Headers | undefined, name: string, expected: unknown): string | null {
  const raw = headers?.get(name);
  if (raw === null || raw === undefined) return `header mismatch: the ${SHOWN[name]} header is missing (it must be ${JSON.stringify(String(expected))})`;
  const value = decodeHeader(raw.trim());
  if (value !== expected) return `header mismatch: ${SHOWN[name]} is ${JSON.stringify(raw.trim())}, the body says ${JSON.stringify(expected)}`;
  return null;
}

const SHOWN: Record<string, string> = { "mcp-protocol-version": "MCP-Protocol-Version", "mcp-method": "Mcp-Method", "mcp-name": "Mcp-Name" };

const BASE64_WORD = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/i;

/** `=?base64?…?=` decoded as UTF-8; a value without the wrapper is literal; bad base64 is null. */
export function decodeHeader(value: string): string | null {
  if (!value.startsWith("=?")) return value;
  const m = BASE64_WORD.exec(value);
  if (!m || m[1]!.length % 4 !== 0) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(m[1]!, "base64"));
  } catch {
    return null;
  }
}

/** A modern result: resultType "complete" unless it has one (a CreateTaskResult's "task"). */
export function modernResult(result: unknown): Record<string, unknown> {
  // Changed in place: every caller hands over a result built for this answer alone.
  const r = result as Record<string, unknown>;
  if (r.resultType === undefined) r.resultType = "complete";
  const meta = r._meta;
  r._meta = typeof meta === "object" && meta !== null ? { ...meta, ...RESULT_META } : RESULT_META;
  return r;
}

// The two list answers never change while the daemon runs: built once.
export const DISCOVER_RESULT = {
  resultType: "complete",
  supportedVersions: [MODERN_VERSION, ...PROTOCOL_VERSIONS],
  capabilities: { tools: {}, extensions: { [TASKS_EXTENSION_ID]: {} } },
  serverInfo,
  instructions: INSTRUCTIONS,
  ttlMs: LIST_TTL_MS,
  cacheScope: CACHE_SCOPE,
  _meta: RESULT_META,
};

export const TOOLS_LIST_RESULT = { tools: TOOL_LIST, ttlMs: LIST_TTL_MS, cacheScope: CACHE_SCOPE, resultType: "complete", _meta: RESULT_META };

/** A modern error body; the status goes on the HTTP response. */
export function modernErrorBody(id: unknown, e: ModernError): Record<string, unknown> {
  const error: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.data) error.data = e.data;
  return { jsonrpc: "2.0", id, error };
}
