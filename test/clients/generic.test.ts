// `airlock setup generic` writes nothing: it prints the server entry and the policy to paste.
import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { policyText } from "../../src/clients/policy.ts";
import { runCli } from "../helpers/daemon.ts";

test("prints the MCP entry and the policy, and touches no file", async () => {
  const home = mkdtempSync(join(tmpdir(), "airlock-generic-"));
  const r = await runCli(["setup", "generic"], { HOME: home, AIRLOCK_HOME: join(home, ".airlock"), AIRLOCK_PORT: "4000", AIRLOCK_TOKEN: "t0k" });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`"url": "http://127.0.0.1:4000/"`);
  expect(r.stdout).toContain(`"Authorization": "Bearer <contents of ${join(home, ".airlock", "token")}>"`);
  expect(r.stdout).not.toContain("t0k");
  expect(r.stdout).toContain(policyText());
  expect(readdirSync(home).filter((f) => f !== ".bun")).toEqual([]);
  const dry = await runCli(["setup", "generic", "--dry-run"], { HOME: home, AIRLOCK_HOME: join(home, ".airlock") });
  expect(dry.code).toBe(0);
});

test("the policy tells an agent whose client supports MCP tasks to ask for a long slot wait, and the cap otherwise", () => {
  expect(policyText()).toContain("acquire_slot(agent_id, reason, wait_seconds=1800)");
  expect(policyText()).toContain("background task");
  expect(policyText()).toContain("capped at 50 s");
});
