// Warm-up before any timed figure: the JIT, SQLite's page cache, and the write-ahead log.
// A fresh database's WAL grows with every commit, and on ext4 an fsync of a file that grew
// also commits the file system's journal (about twice the cost of an fsync that overwrites).
// SQLite rewinds the WAL to its start after the first full checkpoint (1000 pages), and from
// then on a running daemon's commits overwrite it: that steady state is what we measure.
import type { DaemonProcess } from "../test/helpers/daemon.ts";

// Each sequential note write is one commit of 2–3 pages; 1500 of them pass the 1000-page
// checkpoint whatever the durability mode (sequential: group commit would merge them).
const WARM_UP_WRITES = 1500;

export async function warmUp(d: DaemonProcess): Promise<void> {
  for (let i = 0; i < 200; i++) await d.rpc("ping");
  for (let i = 0; i < WARM_UP_WRITES; i++) await d.call("set_note", { key: `warm-up:${i % 64}`, value: "x".repeat(512) });
}
