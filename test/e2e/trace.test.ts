// AIRLOCK_TRACE (src/trace.ts, read by bench/trace.ts): a daemon started with it writes the
// steps of each call, in order, to the file when it exits. The store's steps (commit, fsync,
// afterCommit hooks) are marked by SQLite's store only, so it runs on SQLite only.
import { expect } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteOnly, useDaemonStarter } from "../helpers/daemon.ts";

const start = useDaemonStarter();

sqliteOnly("a daemon started with AIRLOCK_TRACE writes each call's steps, in order, when it exits", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "airlock-trace-")), "marks");
  const d = await start({ args: ["--durability", "full"], env: { AIRLOCK_TRACE: file } });
  const before = Date.now();
  const res = await d.post(JSON.stringify({ jsonrpc: "2.0", id: "traced", method: "tools/call", params: { name: "increment_counter", arguments: { name: "c" } } }));
  expect(res.status).toBe(200);
  await d.kill();
  const marks = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => ({ t: Number(l.slice(0, l.indexOf(" "))), label: l.slice(l.indexOf(" ") + 1) }));
  const call = marks.slice(marks.findLastIndex((m) => m.label === "recv"));
  expect(call.map((m) => m.label)).toEqual(["recv", "tx", "tx end", "ran increment_counter", "commit", "committed", "hooks done", "durable increment_counter", "respond traced"]);
  // On the wall clock, so that a client's own times can be laid beside them.
  for (const m of call) expect(Math.abs(m.t - before)).toBeLessThan(60_000);
  for (let i = 1; i < call.length; i++) expect(call[i]!.t).toBeGreaterThanOrEqual(call[i - 1]!.t);
});
