// Helper process for the flock(2) hand-off measurement: each round it waits for "go" on
// stdin, blocks in flock(LOCK_EX) until the parent releases, prints the monotonic time it got
// the lock, and releases.
import { openSync } from "node:fs";
import { flock, LOCK_EX, LOCK_UN, monotonicNs } from "./flock.ts";

const fd = openSync(process.argv[2]!, "r");
const reader = Bun.stdin.stream().getReader();
const dec = new TextDecoder();
let buf = "";
for (;;) {
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) process.exit(0);
    buf += dec.decode(value);
  }
  buf = buf.slice(buf.indexOf("\n") + 1);
  process.stdout.write("waiting\n");
  flock(fd, LOCK_EX);
  const t1 = monotonicNs();
  flock(fd, LOCK_UN);
  process.stdout.write(`${t1}\n`);
}
