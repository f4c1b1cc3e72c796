// The bearer token: generated once into a 0600 file, read back, refused when empty or open to
// others (never "auth off"), overridden by AIRLOCK_TOKEN, optional on macOS.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientToken, generateToken, readTokenFile, resolveToken } from "../../src/config/token.ts";
import { AirlockError } from "../../src/errors.ts";

let dir: string;
let savedEnv: string | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "airlock-token-"));
  savedEnv = process.env.AIRLOCK_TOKEN;
  delete process.env.AIRLOCK_TOKEN;
});

afterEach(() => {
  if (savedEnv === undefined) delete process.env.AIRLOCK_TOKEN;
  else process.env.AIRLOCK_TOKEN = savedEnv;
  rmSync(dir, { recursive: true, force: true });
});

const isRoot = process.getuid?.() === 0;

function refusal(fn: () => unknown): AirlockError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AirlockError);
    expect((err as AirlockError).code).toBe("config");
    return err as AirlockError;
  }
  throw new Error("expected the call to be refused");
}

describe("generation", () => {
  test("generates a 64-hex-character token into a 0600 file on Linux", () => {
    const path = join(dir, "token");
    const token = resolveToken({ path, platform: "linux" });
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8").trim()).toBe(token!);
  });

  test("a second resolve reads the same token", () => {
    const path = join(dir, "token");
    const first = resolveToken({ path, platform: "linux" });
    const second = resolveToken({ path, platform: "linux" });
    expect(second).toBe(first!);
    expect(clientToken(path)).toBe(first!);
  });

  test("creates a missing parent directory as 0700", () => {
    const path = join(dir, "nested", ".airlock", "token");
    const token = resolveToken({ path, platform: "linux" });
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(dir, "nested", ".airlock")).mode & 0o777).toBe(0o700);
  });

  test("every generated token is different", () => {
    const seen = new Set(Array.from({ length: 50 }, () => generateToken()));
    expect(seen.size).toBe(50);
    for (const t of seen) expect(t).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("refusals", () => {
  test("an empty token file is refused, saying how to fix it, never taken as auth off", () => {
    const path = join(dir, "token");
    writeFileSync(path, "", { mode: 0o600 });
    const err = refusal(() => resolveToken({ path, platform: "linux" }));
    expect(err.message).toContain(path);
    expect(err.message).toContain("empty");
    expect(err.message).toMatch(/delete it/);
    expect(readFileSync(path, "utf8")).toBe("");
  });

  test("a token file holding only whitespace counts as empty", () => {
    const path = join(dir, "token");
    writeFileSync(path, " \n\t\n", { mode: 0o600 });
    expect(refusal(() => resolveToken({ path, platform: "linux" })).message).toContain("empty");
  });

  test("an empty token file is refused on macOS too", () => {
    const path = join(dir, "token");
    writeFileSync(path, "", { mode: 0o600 });
    refusal(() => resolveToken({ path, platform: "darwin" }));
  });

  for (const mode of [0o644, 0o640, 0o604, 0o666]) {
    test(`a token file with mode ${mode.toString(8)} is refused with chmod 600 advice`, () => {
      const path = join(dir, "token");
      writeFileSync(path, "a".repeat(64));
      chmodSync(path, mode);
      const err = refusal(() => resolveToken({ path, platform: "linux" }));
      expect(err.message).toContain(`chmod 600 ${path}`);
      expect(err.message).toContain(mode.toString(8));
    });
  }

  test("a token file with mode 0400 is accepted", () => {
    const path = join(dir, "token");
    writeFileSync(path, "b".repeat(64));
    chmodSync(path, 0o400);
    expect(resolveToken({ path, platform: "linux" })).toBe("b".repeat(64));
  });

  test.skipIf(isRoot)("an unreadable token file is refused, saying how to fix it", () => {
    const path = join(dir, "token");
    writeFileSync(path, "c".repeat(64));
    chmodSync(path, 0o000);
    const err = refusal(() => resolveToken({ path, platform: "linux" }));
    expect(err.message).toContain("chmod 600");
  });

  test("a token path that is a directory is refused, not auth off", () => {
    const path = join(dir, "token");
    mkdirSync(path, { mode: 0o700 });
    const err = refusal(() => resolveToken({ path, platform: "linux" }));
    expect(err.message).toContain(`cannot read the token file ${path}`);
  });

  test("readTokenFile trims the trailing newline", () => {
    const path = join(dir, "token");
    writeFileSync(path, `${"d".repeat(64)}\n`, { mode: 0o600 });
    expect(readTokenFile(path)).toBe("d".repeat(64));
  });
});

describe("AIRLOCK_TOKEN", () => {
  test("overrides the token file", () => {
    const path = join(dir, "token");
    writeFileSync(path, "e".repeat(64), { mode: 0o600 });
    process.env.AIRLOCK_TOKEN = "from-env";
    expect(resolveToken({ path, platform: "linux" })).toBe("from-env");
    expect(clientToken(path)).toBe("from-env");
  });

  test("overrides even a refused token file, and no file is written", () => {
    const path = join(dir, "token");
    process.env.AIRLOCK_TOKEN = "from-env";
    expect(resolveToken({ path, platform: "linux" })).toBe("from-env");
    expect(existsSync(path)).toBe(false);
    writeFileSync(path, "", { mode: 0o644 });
    expect(resolveToken({ path, platform: "linux" })).toBe("from-env");
  });

  test("an empty AIRLOCK_TOKEN is not auth off: the file token is used", () => {
    const path = join(dir, "token");
    process.env.AIRLOCK_TOKEN = "";
    const token = resolveToken({ path, platform: "linux" });
    expect(token).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("macOS", () => {
  test("with no token file there is no token, and none is written", () => {
    const path = join(dir, "token");
    expect(resolveToken({ path, platform: "darwin" })).toBeUndefined();
    expect(existsSync(path)).toBe(false);
    expect(clientToken(path)).toBeUndefined();
  });

  test("required: true (a non-loopback bind) generates one", () => {
    const path = join(dir, "token");
    const token = resolveToken({ path, platform: "darwin", required: true });
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("an existing token file is used", () => {
    const path = join(dir, "token");
    writeFileSync(path, "f".repeat(64), { mode: 0o600 });
    expect(resolveToken({ path, platform: "darwin" })).toBe("f".repeat(64));
  });
});
