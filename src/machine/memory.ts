// The daemon's memory after a full collection: what a leak check compares. RSS alone moves with
// where the collector's passes fall (it saws up between them, and a busy machine spaces them
// out), so a leak test that reads only RSS fails on load, not on leaks; the live heap after a
// synchronous full collection is what the daemon really keeps.
import { heapStats } from "bun:jsc";

export interface MemoryAfterCollection {
  /** The process's resident set, read right after the collection. */
  rss_bytes: number;
  /** Bytes of live objects on the JavaScript heap. */
  heap_bytes: number;
  /** How many live objects. */
  objects: number;
}

/** Runs a full, synchronous collection (a pause of a few milliseconds), then measures. */
export function memoryAfterCollection(): MemoryAfterCollection {
  Bun.gc(true);
  const heap = heapStats();
  return { rss_bytes: process.memoryUsage.rss(), heap_bytes: heap.heapSize, objects: heap.objectCount };
}
