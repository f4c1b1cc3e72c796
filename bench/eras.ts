// The 2026-07-28 era's cost (bench/run.ts's era figure, alone with `--only eras`): the same
// tools/call in both eras on one daemon, timed alternately call for call so that both see the
// same moment of the machine. The modern request carries what a modern client sends: the _meta
// envelope (protocolVersion, clientCapabilities, clientInfo) and the three routing headers; its
// answer carries resultType and the serverInfo _meta. The goal is at most 1.05×.
import type { DaemonProcess } from "../test/helpers/daemon.ts";
import { paired } from "./pairing.ts";

type Add = (r: { mode: string; metric: string; value: number; unit: string; baseline?: string; baselineValue?: number }) => void;

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "0" },
};
const MODERN_HEADERS = { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "increment_counter", accept: "application/json, text/event-stream" };
const LEGACY_HEADERS = { "MCP-Protocol-Version": "2025-11-25", accept: "application/json, text/event-stream" };

export async function eraFigures(d: DaemonProcess, mode: string, add: Add, quick: boolean): Promise<void> {
  let id = 0;
  const call = async (modern: boolean) => {
    const params = { name: "increment_counter", arguments: { name: modern ? "bench:era:modern" : "bench:era:legacy" }, ...(modern ? { _meta: META } : {}) };
    const res = await d.post(JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params }), modern ? MODERN_HEADERS : LEGACY_HEADERS);
    const body = (await res.json()) as { result?: { resultType?: string } };
    if (!body.result || (modern && body.result.resultType !== "complete")) throw new Error(`bench: the ${modern ? "modern" : "2025"} call failed: ${JSON.stringify(body)}`);
  };
  const n = quick ? 500 : 3000;
  await paired(200, () => call(true), () => call(false)); // warm both paths
  // Two halves with the order swapped, so neither era always goes first.
  const [m1, l1] = await paired(n / 2, () => call(true), () => call(false));
  const [l2, m2] = await paired(n / 2, () => call(false), () => call(true));
  const modern = (m1 + m2) / 2;
  const legacy = (l1 + l2) / 2;
  add({ mode, metric: "increment_counter, 2026-07-28 era (p50)", value: modern, unit: "ms", baseline: "the same call, 2025 era", baselineValue: legacy });
}
