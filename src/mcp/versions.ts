// The protocol versions we speak, in both eras. Apart from jsonrpc.ts and modern.ts so that
// each can read them without importing the other.

/**
 * The 2025-era versions, newest first; initialize echoes the client's if listed. A test keeps
 * this in step with the MCP SDK's own constants; the SDK is not imported here because loading
 * it (and zod) at start-up costs tens of milliseconds for one string.
 */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
export const NEWEST_PROTOCOL_VERSION: string = PROTOCOL_VERSIONS[0];

/** The stateless era: negotiated per request through params._meta, never by initialize. */
export const MODERN_VERSION = "2026-07-28";
