// The stdio bridge's cost, alone: `bun bench/bridge.ts [--quick]`. The same tools/call
// (increment_counter) straight to the daemon's POST / and through one `airlock mcp` process
// (a line on its stdin, the answer line on its stdout), timed alternately call for call
// (pairing.ts) so both see the same moment of the machine. Prints the two medians and the ratio.
import { daemonCommand, ROOT, startDaemon } from "../test/helpers/daemon.ts";
import { paired } from "./pairing.ts";

const quick = process.argv.includes("--quick");
const n = quick ? 300 : 2000;
const d = await startDaemon();
const [cmd, ...rest] = daemonCommand();
const bridge = Bun.spawn([cmd!, ...rest, "mcp"], { cwd: ROOT, env: { ...process.env, AIRLOCK_HOME: d.home, AIRLOCK_PORT: String(d.port) }, stdin: "pipe", stdout: "pipe", stderr: "inherit" });
const waiting = new Map<number, () => void>();
void (async () => {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of bridge.stdout) {
    buf += dec.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const m = JSON.parse(buf.slice(0, i)) as { id: number; result?: unknown };
      buf = buf.slice(i + 1);
      if (!m.result) throw new Error(`bench: the bridged call failed: ${JSON.stringify(m)}`);
      waiting.get(m.id)?.();
    }
  }
})();
let id = 0;
const viaBridge = () =>
  new Promise<void>((resolve) => {
    const my = ++id;
    waiting.set(my, () => (waiting.delete(my), resolve()));
    bridge.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: my, method: "tools/call", params: { name: "increment_counter", arguments: { name: "bench:bridge" } } })}\n`);
    bridge.stdin.flush();
  });
const direct = () => d.call("increment_counter", { name: "bench:direct" });
try {
  await paired(200, viaBridge, direct); // warm both paths
  const [b1, d1] = await paired(n / 2, viaBridge, direct);
  const [d2, b2] = await paired(n / 2, direct, viaBridge);
  const b = (b1 + b2) / 2;
  const dd = (d1 + d2) / 2;
  console.log(`increment_counter p50: direct ${dd.toFixed(3)} ms, through airlock mcp ${b.toFixed(3)} ms: ${(b / dd).toFixed(2)}× (+${(b - dd).toFixed(3)} ms), n=${n} each`);
} finally {
  bridge.stdin.end();
  await bridge.exited;
  await d.kill();
}
