// Messages (bench/run.ts's message figures, alone with `--only messages`): a send_message of a
// short message and the recipient's read_messages of it, against increment_counter (one write
// transaction and its answer, the cheapest call that commits), timed alternately so both see the
// same moment of the machine. The pair is two calls, so its baseline is two increments. The
// recipient is registered (the typo guard's first look finds it), and its inbox already holds
// 1,000 read messages, so a read is an index range, not a scan.
import type { DaemonProcess } from "../test/helpers/daemon.ts";
import { paired } from "./pairing.ts";

type Add = (r: { mode: string; metric: string; value: number; unit: string; baseline?: string; baselineValue?: number }) => void;

export async function messageFigures(d: DaemonProcess, mode: string, add: Add, quick: boolean): Promise<void> {
  const reps = quick ? 200 : 1000;
  await d.call("register_agent", { agent_id: "bench:inbox", ttl_seconds: 3600 });
  for (let i = 0; i < 1000; i++) await d.call("send_message", { from: "bench:sender", to: ["bench:inbox"], body: `old ${i}` });
  await d.call("read_messages", { agent_id: "bench:inbox", limit: 500 });
  await d.call("read_messages", { agent_id: "bench:inbox", limit: 500 });
  const increment = () => d.call("increment_counter", { name: "bench:messages" });
  const send = () => d.call("send_message", { from: "bench:sender", to: ["bench:inbox"], body: "how long will you be in src/api?" });
  const read = async () => {
    const r = await d.call("read_messages", { agent_id: "bench:inbox" });
    if (r.messages.length !== 1) throw new Error(`bench: read_messages answered ${r.messages.length} messages`);
  };
  const both = async () => {
    await send();
    await read();
  };
  for (let i = 0; i < 50; i++) await both();
  for (let i = 0; i < 50; i++) await increment();
  const [inc, pair] = await paired(reps, increment, both);
  add({ mode, metric: "increment_counter (p50)", value: inc, unit: "ms" });
  add({ mode, metric: "send_message + read_messages, one short message (p50)", value: pair, unit: "ms", baseline: "2 × increment_counter", baselineValue: 2 * inc });
  const [inc2, sent] = await paired(reps, increment, send);
  add({ mode, metric: "send_message alone (p50)", value: sent, unit: "ms", baseline: "increment_counter", baselineValue: inc2 });
  while ((await d.call("read_messages", { agent_id: "bench:inbox", limit: 500 })).messages.length > 0);
}
