// The hook tests' way to reach Airlock: the real HTTP layer in process (createApp, no port),
// with the repository root fixed to the payload's workspace. The fixtures' roots do not exist on
// this machine, so the daemon keeps each as a plain room name (the sandbox rule), and the
// session summary's room is that root too.
import type { DeliverResult } from "../../../src/clients/hooks/inbox.ts";
import type { HookDeps } from "../../../src/clients/hooks/shared.ts";
import type { Snapshot } from "../../../src/domain/snapshot.ts";
import type { TestApp } from "../../mcp/rpc.ts";

export function appDeps(t: TestApp, root: string): HookDeps {
  return {
    async tool(name, args) {
      const r = await t.callRaw(name, args);
      const v = JSON.parse(r.content[0]!.text);
      if (r.isError) throw new Error(v.error);
      return v;
    },
    status: async () => (await t.rpc("airlock/status")).result as Snapshot,
    async deliver(agentId, point, held) {
      const r = await t.rpc("airlock/deliver", { agent_id: agentId, point, held });
      if (r.error) throw new Error(r.error.message);
      return r.result as DeliverResult;
    },
    repoRoots: () => [root],
    roomOf: () => root,
  };
}
