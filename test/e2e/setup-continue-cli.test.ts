// The server entry `airlock setup continue` writes, read by the real Continue CLI (npm
// @continuedev/cli, `cn`, a pinned dev dependency) against a real daemon: cn connects to the MCP
// servers of its config before the first model request, so `cn -p` with a model at a dead port
// shows whether the entry's url and `requestOptions.headers` work (the model's error comes after)
// or not ("MCP server(s) failed to load"). cn 1.5.47 with a local --config does not load the
// ~/.continue/mcpServers/ folder (the IDE extension does), so the test puts the block's own
// `mcpServers` list, as setup wrote it, into that config.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { ROOT, runCli, startDaemon } from "../helpers/daemon.ts";

const CN = join(ROOT, "node_modules", ".bin", "cn");
const IN_CI = process.env.CI === "true";
const haveCn = existsSync(CN);
if (!haveCn) console.log(`skipping the Continue CLI e2e: ${CN} is missing (npm install -D @continuedev/cli)`);

async function cn(home: string, config: string): Promise<string> {
  const proc = Bun.spawn([CN, "-p", "hi", "--config", config], { cwd: home, env: { PATH: process.env.PATH, HOME: home }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(9), 60_000);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return out + err;
}

describe.if(haveCn || IN_CI)("airlock setup continue with the real Continue CLI", () => {
  test("cn loads the block's server with its token; a wrong token fails to load", async () => {
    expect(haveCn).toBe(true);
    const home = mkdtempSync(join(tmpdir(), "airlock-cn-"));
    const d = await startDaemon({ home: join(home, ".airlock") });
    try {
      expect((await runCli(["setup", "continue"], { HOME: home, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port), AIRLOCK_TOKEN: undefined })).code).toBe(0);
      const block = parse(readFileSync(join(home, ".continue", "mcpServers", "airlock.yaml"), "utf8"));
      const model = { name: "dead", provider: "openai", model: "gpt-4o", apiBase: "http://127.0.0.1:1/v1", apiKey: "x" };
      const config = join(home, "config.yaml");
      writeFileSync(config, stringify({ name: "Test", version: "0.0.1", schema: "v1", models: [model], mcpServers: block.mcpServers }));
      const good = await cn(home, config);
      console.log(good.trim().slice(0, 300));
      expect(good).not.toContain("failed to load");
      block.mcpServers[0].requestOptions.headers.Authorization = `Bearer ${"0".repeat(64)}`;
      writeFileSync(config, stringify({ name: "Test", version: "0.0.1", schema: "v1", models: [model], mcpServers: block.mcpServers }));
      const bad = await cn(home, config);
      expect(bad).toContain("MCP server(s) failed to load");
      expect(bad).toContain("airlock");
    } finally {
      await d.kill();
    }
  }, 120_000);
});
