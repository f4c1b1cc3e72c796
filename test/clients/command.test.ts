// The hook command setup writes: the name on PATH when it is this program, a stable path that
// survives an upgrade, this checkout from source, and never a user's path in a project file.
import { describe, expect, test } from "bun:test";
import { airlockCommand, clientPath, commandOfHook, stableBrewPath, verifyCommand, type CommandProbe } from "../../src/clients/command.ts";
import { daemonCommand } from "../helpers/daemon.ts";

const probe = (o: Partial<CommandProbe>): Partial<CommandProbe> => ({ which: () => null, realpath: (p) => p, exists: () => false, ...o });

describe("airlockCommand", () => {
  test("the name on PATH when PATH finds this same binary (through a symlink too)", () => {
    const links: Record<string, string> = { "/usr/local/bin/airlock": "/opt/airlock/airlock" };
    expect(airlockCommand(probe({ execPath: "/opt/airlock/airlock", which: () => "/usr/local/bin/airlock", realpath: (p) => links[p] ?? p }))).toBe("airlock");
  });

  test("another airlock first on PATH: this binary by its own path", () => {
    expect(airlockCommand(probe({ execPath: "/home/me/.local/bin/airlock", which: () => "/usr/bin/airlock" }))).toBe("/home/me/.local/bin/airlock");
    expect(airlockCommand(probe({ execPath: "/My Apps/airlock" }))).toBe("'/My Apps/airlock'");
  });

  test("a Homebrew Cellar path becomes the stable link, never the versioned path brew cleanup deletes", () => {
    const cellar = "/opt/homebrew/Cellar/airlock/0.1.0/bin/airlock";
    expect(airlockCommand(probe({ execPath: cellar, exists: (p) => p === "/opt/homebrew/bin/airlock" }))).toBe("/opt/homebrew/bin/airlock");
    expect(airlockCommand(probe({ execPath: cellar }))).toBe("/opt/homebrew/opt/airlock/bin/airlock");
    expect(stableBrewPath("/home/linuxbrew/.linuxbrew/Cellar/airlock/1.2.3_1/bin/airlock", () => true)).toBe("/home/linuxbrew/.linuxbrew/bin/airlock");
    expect(stableBrewPath("/usr/local/bin/airlock")).toBeUndefined();
  });

  test("a project-scoped file always gets the bare name", () => {
    expect(airlockCommand(probe({ execPath: "/home/me/.local/bin/airlock", project: true }))).toBe("airlock");
    expect(airlockCommand(probe({ execPath: "/usr/bin/bun", main: "/src/airlock/src/main.ts", project: true }))).toBe("airlock");
  });

  test("from source with no airlock on PATH: bun and this checkout's main.ts, absolute and quoted", () => {
    expect(airlockCommand(probe({ execPath: "/home/me/.bun/bin/bun", main: "/home/me/my code/src/main.ts" }))).toBe("/home/me/.bun/bin/bun '/home/me/my code/src/main.ts'");
    // bun itself from Homebrew: its stable link, not the Cellar.
    expect(airlockCommand(probe({ execPath: "/opt/homebrew/Cellar/bun/1.4.5/bin/bun", main: "/w/src/main.ts", exists: () => true }))).toBe("/opt/homebrew/bin/bun /w/src/main.ts");
  });

  test("from source with this checkout on PATH (npm link, bun link): the name", () => {
    expect(airlockCommand(probe({ execPath: "/usr/bin/bun", main: "/w/src/main.ts", which: () => "/home/me/.bun/bin/airlock", realpath: (p) => (p === "/home/me/.bun/bin/airlock" ? "/w/src/main.ts" : p) }))).toBe("airlock");
  });
});

describe("verifyCommand", () => {
  test("runs `<cmd> version` through sh and accepts only an airlock answer", () => {
    const cmd = daemonCommand().map((a) => `'${a}'`).join(" ");
    const ok = verifyCommand(cmd);
    expect(ok.ok).toBe(true);
    expect(ok.output).toMatch(/^airlock \S+$/);
    const missing = verifyCommand("airlock-that-does-not-exist", { PATH: "/nonexistent" });
    expect(missing.ok).toBe(false);
    expect(missing.output).toContain("not found");
    expect(verifyCommand("echo", {}).ok).toBe(false); // prints "version", not "airlock X"
  }, 30_000);

  test("commandOfHook strips ` hook <client> <event>`", () => {
    expect(commandOfHook("/usr/bin/bun '/a b/src/main.ts' hook codex pre-edit")).toBe("/usr/bin/bun '/a b/src/main.ts'");
    expect(commandOfHook("airlock hook claude-code stop")).toBe("airlock");
  });
});

describe("clientPath", () => {
  test("drops every node_modules/.bin (npx, npm run), keeps the rest in order", () => {
    expect(clientPath("/w/app/node_modules/.bin:/usr/bin:/home/me/node_modules/.bin/:node_modules/.bin:/bin")).toBe("/usr/bin:/bin");
    expect(clientPath("/opt/node_modules/bin:/usr/bin")).toBe("/opt/node_modules/bin:/usr/bin");
  });
});
