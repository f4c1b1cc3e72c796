// The MCP conformance suite's 2026-07-28 scenarios that apply to a tools-only server, against a
// real daemon (source, or the compiled binary under AIRLOCK_BIN). The suite needs Node >= 22;
// it runs under our Bun instead. It cannot send an Authorization header, and the daemon
// requires its bearer token on Linux, so it talks to a small forwarding proxy that adds the
// header, as an MCP gateway in front of the daemon would; Host, Origin and every other header
// pass through untouched (the DNS-rebinding scenario depends on them). Failures excused by
// .ci/conformance-baseline.yml carry their reason there; anything else fails the test.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, ROOT, useDaemon } from "../helpers/daemon.ts";

const SUITE = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const BASELINE = join(ROOT, ".ci/conformance-baseline.yml");
const SCENARIOS = ["server-stateless", "tools-list", "http-header-validation", "caching", "dns-rebinding-protection"];

const d = useDaemon();
let proxy: ReturnType<typeof Bun.serve> | undefined;

beforeAll(() => {
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 120,
    async fetch(req) {
      const u = new URL(req.url);
      const headers = new Headers(req.headers);
      if (d.token) headers.set("authorization", `Bearer ${d.token}`);
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      const res = await fetch(`${d.url}${u.pathname}${u.search}`, { method: req.method, headers, body, signal: req.signal, redirect: "manual" });
      return new Response(res.body, { status: res.status, headers: res.headers });
    },
  });
});
afterAll(() => proxy?.stop(true));

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

for (const scenario of SCENARIOS) {
  test(`conformance: ${scenario} passes but for the baseline`, async () => {
    const out = mkdtempSync(join(tmpdir(), "airlock-conformance-"));
    const proc = Bun.spawn(
      [BUN, SUITE, "server", "--url", `http://127.0.0.1:${proxy!.port}/`, "--scenario", scenario, "--expected-failures", BASELINE, "-o", out],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" }, stdout: "pipe", stderr: "pipe" },
    );
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const dir = readdirSync(out).find((n) => existsSync(join(out, n, "checks.json")));
    const checks: Check[] = dir ? JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8")) : [];
    const count = (s: string) => checks.filter((c) => c.status === s).length;
    console.log(`conformance ${scenario}: ${count("SUCCESS")} passed, ${count("FAILURE")} failed (the baseline must name each), ${count("WARNING")} warnings, ${count("SKIPPED")} skipped`);
    if (code !== 0) console.log(stdout.slice(-4000), stderr.slice(-2000));
    expect(checks.length).toBeGreaterThan(0);
    expect(code).toBe(0);
    expect(checks.filter((c) => c.status === "WARNING")).toEqual([]);
  }, 90_000);
}
