// VS Code (GitHub Copilot agent mode): the MCP server in the user profile's mcp.json or the
// workspace's .vscode/mcp.json (`servers.airlock`, `{type: "http", url, headers}`), the policy in
// an always-applied user instructions file (~/.copilot/instructions/airlock.instructions.md,
// `applyTo: "**"`) or the workspace's .github/copilot-instructions.md. No Airlock hooks: VS Code
// documents agent hooks, but `airlock hook` has no VS Code adapter yet.
// Token: VS Code is a GUI app that usually does not see a shell's AIRLOCK_TOKEN, so the user file
// holds the literal token and is written 0600. A workspace file may be committed, so it uses VS
// Code's documented input variable, `Bearer ${input:airlock-token}` with a password `promptString`
// in `inputs`: VS Code asks each user once and keeps the value in its secret storage.
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  getAt,
  jsonAppend,
  jsonDelete,
  jsonServerPart,
  parseJsonc,
  policyBlock,
  textBlockPart,
  type Client,
  type Part,
  type SetupContext,
} from "./client.ts";
import type { CreatedRecord } from "./files.ts";

const ID = "vscode";
/** The `inputs` entry a workspace mcp.json prompts with; the header refers to it by id. */
export const TOKEN_INPUT_ID = "airlock-token";

export const TOKEN_INPUT = {
  type: "promptString",
  id: TOKEN_INPUT_ID,
  description: "Airlock token (the contents of ~/.airlock/token)",
  password: true,
} as const;

export const INSTRUCTIONS_HEADER = '---\nname: Airlock\ndescription: Airlock coordination policy (written by `airlock setup vscode`)\napplyTo: "**"\n---\n';

/** The VS Code user data folder of the default profile, where settings.json and mcp.json live. */
export function vscodeUserDir(ctx: SetupContext, platform: NodeJS.Platform = process.platform): string {
  if (platform === "darwin") return join(ctx.home, "Library", "Application Support", "Code", "User");
  return join(ctx.xdgConfigHome, "Code", "User");
}

export function vscodePaths(ctx: SetupContext, platform: NodeJS.Platform = process.platform): { mcp: string; policy: string } {
  if (ctx.project) return { mcp: join(ctx.project, ".vscode", "mcp.json"), policy: join(ctx.project, ".github", "copilot-instructions.md") };
  return { mcp: join(vscodeUserDir(ctx, platform), "mcp.json"), policy: join(ctx.home, ".copilot", "instructions", "airlock.instructions.md") };
}

export function vscodeServer(ctx: SetupContext): Record<string, unknown> {
  const entry: Record<string, unknown> = { type: "http", url: ctx.url };
  if (ctx.project) entry.headers = { Authorization: `Bearer \${input:${TOKEN_INPUT_ID}}` };
  else if (ctx.token !== undefined) entry.headers = { Authorization: `Bearer ${ctx.token}` };
  return entry;
}

function ourInputIndexes(text: string, file: string): number[] {
  const arr = getAt(parseJsonc(text, file), ["inputs"]);
  if (!Array.isArray(arr)) return [];
  return arr.flatMap((x, i) => ((x as { id?: unknown })?.id === TOKEN_INPUT_ID ? [i] : []));
}

/**
 * Our `inputs` entry (workspace scope). It shares its file with the server entry, so it prunes only
 * the `inputs` array it created itself and leaves the record of `servers` to the server part.
 */
function tokenInputPart(file: string): Part {
  const INPUTS = JSON.stringify(["inputs"]);
  return {
    what: "token input",
    path: file,
    install(text, rec) {
      const t = text ?? "";
      const ours = t.trim() === "" ? [] : ourInputIndexes(t, file);
      const arr = getAt(parseJsonc(t, file), ["inputs"]) as unknown[] | undefined;
      if (ours.length === 1 && JSON.stringify(arr?.[ours[0]!]) === JSON.stringify(TOKEN_INPUT)) return t;
      let out = t;
      for (const i of [...ours].reverse()) out = jsonDelete(out, ["inputs", i]);
      return jsonAppend(out, file, ["inputs"], TOKEN_INPUT, rec);
    },
    remove(text, rec: CreatedRecord) {
      let t = text;
      for (const i of ourInputIndexes(t, file).reverse()) t = jsonDelete(t, ["inputs", i]);
      const created = rec.paths?.some((p) => JSON.stringify(p) === INPUTS);
      const arr = getAt(parseJsonc(t, file), ["inputs"]);
      if (created && Array.isArray(arr) && arr.length === 0) t = jsonDelete(t, ["inputs"]);
      rec.paths = rec.paths?.filter((p) => JSON.stringify(p) !== INPUTS);
      return t;
    },
    isInstalled: (text) => text !== null && ourInputIndexes(text, file).length > 0,
    isEmpty: (text) => text.trim() === "" || JSON.stringify(parseJsonc(text, file)) === "{}",
  };
}

export const vscode: Client = {
  id: ID,
  name: "VS Code (GitHub Copilot agent mode)",
  docs: [
    "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
    "https://code.visualstudio.com/docs/copilot/customization/mcp-servers",
    "https://code.visualstudio.com/docs/copilot/customization/custom-instructions",
  ],
  detect(ctx) {
    const dir = vscodeUserDir(ctx);
    if (existsSync(dir)) return dir;
    return Bun.which("code") ?? undefined;
  },
  parts(ctx) {
    const p = vscodePaths(ctx);
    const parts: Part[] = [jsonServerPart({ path: p.mcp, container: ["servers"], entry: vscodeServer(ctx), secret: !ctx.project && ctx.token !== undefined })];
    if (ctx.project) parts.push(tokenInputPart(p.mcp));
    parts.push(textBlockPart({ path: p.policy, block: policyBlock(), header: ctx.project ? undefined : INSTRUCTIONS_HEADER }));
    return parts;
  },
  notes(ctx) {
    const out: string[] = [];
    if (ctx.project) out.push("The workspace's .vscode/mcp.json asks for the token (input `airlock-token`) the first time the server starts: paste the contents of ~/.airlock/token; VS Code keeps it in its secret storage.");
    else if (ctx.token === undefined) out.push("No token yet (the daemon makes one on first start on Linux): the server entry has no auth header; run setup again after `airlock daemon` has started once.");
    if (!ctx.project) out.push("This is the default VS Code profile's mcp.json; for another profile, add the server with `MCP: Open User Configuration` in that profile.");
    out.push("VS Code has no Airlock hooks yet: the policy in the instructions file is what asks the agent to claim paths and take slots.");
    return out;
  },
};
