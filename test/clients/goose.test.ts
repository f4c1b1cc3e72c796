// `airlock setup goose` round trips in a temporary HOME: the extension in config.yaml (uri, not
// url; the literal token, 0600), the policy in .goosehints; a merge into a config.yaml the way goose
// writes it (serde_yaml: lists at the key's column) with the user's comments keeps every other byte,
// an older entry of ours is replaced, --remove gives back the bytes, --dry-run writes nothing, and a
// file that is not YAML is refused.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { applyParts, diffOf, policyBlock, type SetupContext } from "../../src/clients/client.ts";
import { goose } from "../../src/clients/goose.ts";

const TOKEN = "e".repeat(64);
const URL = "http://127.0.0.1:27183/";

function ctxFor(project?: string, url = URL): SetupContext {
  const home = mkdtempSync(join(tmpdir(), "airlock-goose-"));
  return { home, project, xdgConfigHome: join(home, ".config"), url, tokenPath: join(home, ".airlock", "token"), token: TOKEN, airlock: "airlock", airlockHome: join(home, ".airlock") };
}

const run = (ctx: SetupContext, o: { remove?: boolean; dryRun?: boolean } = {}) => applyParts(goose.parts(ctx), { ...o, airlockHome: ctx.airlockHome });
const read = (p: string) => readFileSync(p, "utf8");
const OURS = (url = URL) =>
  `  airlock:\n    enabled: true\n    type: streamable_http\n    name: airlock\n    description: "Airlock: coordination with other agents"\n    uri: ${url}\n    headers:\n      Authorization: Bearer ${TOKEN}\n    timeout: 300\n`;

// As goose itself writes config.yaml (serde_yaml), plus comments a user added.
const USER = `# my goose settings
GOOSE_PROVIDER: openai # the provider
GOOSE_MODEL: gpt-4o
extensions:
  developer:
    bundled: true
    display_name: Developer
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  fetch:
    args:
    - mcp-server-fetch
    cmd: uvx
    enabled: true
    envs: {}
    name: fetch
    type: stdio
# keep this comment
GOOSE_MODE: smart_approve`;

describe("airlock setup goose", () => {
  test("user scope: config.yaml with the streamable_http extension (0600) and .goosehints; --remove leaves no file", async () => {
    const ctx = ctxFor();
    const config = join(ctx.home, ".config", "goose", "config.yaml");
    const hints = join(ctx.home, ".config", "goose", ".goosehints");
    expect((await run(ctx)).map((c) => c.path)).toEqual([config, hints]);
    expect(read(config)).toBe(`extensions:\n${OURS()}`);
    expect(parse(read(config)).extensions.airlock).toEqual({ enabled: true, type: "streamable_http", name: "airlock", description: "Airlock: coordination with other agents", uri: URL, headers: { Authorization: `Bearer ${TOKEN}` }, timeout: 300 });
    expect(statSync(config).mode & 0o777).toBe(0o600);
    expect(read(hints)).toBe(policyBlock());
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(existsSync(config)).toBe(false);
    expect(existsSync(hints)).toBe(false);
  });

  test("merges after the user's extensions, keeping comments and goose's list style; --remove restores the bytes", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".config", "goose");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "config.yaml"), USER);
    await run(ctx);
    const [head, tail] = USER.split("# keep this comment");
    expect(read(join(dir, "config.yaml"))).toBe(`${head}${OURS()}# keep this comment${tail}`);
    expect(read(join(dir, "config.yaml.airlock-backup"))).toBe(USER);
    expect(await run(ctx)).toEqual([]);
    await run(ctx, { remove: true });
    expect(read(join(dir, "config.yaml"))).toBe(USER);
  });

  test("an extensions map at the end of a file with no newline; a file without extensions; both come back byte for byte", async () => {
    for (const user of ["GOOSE_PROVIDER: openai\nextensions:\n  fetch:\n    cmd: uvx\n    type: stdio", "# just a provider\nGOOSE_PROVIDER: openai\n", "GOOSE_PROVIDER: openai"]) {
      const ctx = ctxFor();
      const config = join(ctx.home, ".config", "goose", "config.yaml");
      mkdirSync(join(ctx.home, ".config", "goose"), { recursive: true });
      writeFileSync(config, user);
      await run(ctx);
      const doc = parse(read(config));
      expect(doc.extensions.airlock.uri).toBe(URL);
      expect(doc.GOOSE_PROVIDER).toBe("openai");
      if (user.includes("fetch")) expect(doc.extensions.fetch).toEqual({ cmd: "uvx", type: "stdio" });
      await run(ctx, { remove: true });
      expect(read(config)).toBe(user);
    }
  });

  test("an older entry of ours (another port) is replaced in place, not duplicated", async () => {
    const ctx = ctxFor();
    const dir = join(ctx.home, ".config", "goose");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "config.yaml"), USER);
    await run(ctx);
    const moved = { ...ctx, url: "http://127.0.0.1:4000/" };
    await run(moved);
    const text = read(join(dir, "config.yaml"));
    expect(text.match(/ airlock:/g)?.length).toBe(1);
    expect(text).toContain(OURS("http://127.0.0.1:4000/"));
    await run(moved, { remove: true });
    expect(read(join(dir, "config.yaml"))).toBe(USER);
  });

  test("a config.yaml that is not YAML is refused and left alone", async () => {
    const ctx = ctxFor();
    const config = join(ctx.home, ".config", "goose", "config.yaml");
    mkdirSync(join(ctx.home, ".config", "goose"), { recursive: true });
    writeFileSync(config, "extensions: [unclosed\n");
    await expect(run(ctx)).rejects.toThrow("is not valid YAML");
    expect(read(config)).toBe("extensions: [unclosed\n");
  });

  test("--project writes only the project's .goosehints (goose reads extensions from the user config); --dry-run writes nothing", async () => {
    const project = mkdtempSync(join(tmpdir(), "airlock-goose-proj-"));
    const ctx = ctxFor(project);
    expect((await run(ctx)).map((c) => c.path)).toEqual([join(project, ".goosehints")]);
    expect(goose.notes!(ctx).join("\n")).toContain("~/.config/goose/config.yaml");
    await run(ctx, { remove: true });
    expect(existsSync(join(project, ".goosehints"))).toBe(false);
    const user = ctxFor();
    expect(diffOf(await run(user, { dryRun: true }))).toContain("+  airlock:\n+    enabled: true\n+    type: streamable_http");
    expect(existsSync(join(user.home, ".config"))).toBe(false);
    expect(existsSync(join(user.home, ".airlock", "setup-state.json"))).toBe(false);
  });
});
