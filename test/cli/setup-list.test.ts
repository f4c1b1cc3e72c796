// Bare `airlock setup`, one line per client (clientLine): found or not, what is installed and what
// is missing; a config file that does not parse is named on that client's line, not thrown, so
// every other client is still listed.
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientLine } from "../../src/cli/setup.ts";
import { applyParts, type SetupContext } from "../../src/clients/client.ts";
import { amp } from "../../src/clients/amp.ts";
import { CLIENTS, findClient } from "../../src/clients/index.ts";

function ctxFor(): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-setup-list-"));
  return { home, xdgConfigHome: join(home, ".config"), url: "http://127.0.0.1:27183/", tokenPath: join(home, ".airlock", "token"), token: "t".repeat(64), airlock: "airlock", airlockHome: join(home, ".airlock") };
}

describe("bare airlock setup", () => {
  test("one line per client: not set up, installed, partly installed with what is missing, unreadable, prints what to paste", async () => {
    const ctx = ctxFor();
    mkdirSync(join(ctx.home, ".config", "goose"), { recursive: true });
    writeFileSync(join(ctx.home, ".config", "goose", "config.yaml"), "extensions: [unclosed\n");
    await applyParts(amp.parts(ctx).filter((p) => p.what === "policy"), { airlockHome: ctx.airlockHome });
    await applyParts(findClient("zed")!.parts(ctx), { airlockHome: ctx.airlockHome });
    const lines = CLIENTS.map((c) => clientLine(c, ctx));
    expect(lines.every((l) => !l.includes("\n"))).toBe(true);
    const line = (id: string) => lines.find((l) => l.startsWith(`${id} `))!;
    expect(line("warp")).toBe("warp         not found; not set up");
    expect(line("zed")).toBe(`zed          found (${join(ctx.home, ".config", "zed")}); installed: MCP server`);
    expect(line("amp")).toBe(`amp          found (${join(ctx.home, ".config", "amp")}); installed: policy (missing: MCP server)`);
    expect(line("goose")).toMatch(/^goose +found \(.*\); cannot tell: .*config\.yaml is not valid YAML/);
    expect(line("generic")).toBe("generic      not found; prints what to paste");
  });
});
