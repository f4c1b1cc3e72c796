// flock(2) and clock_gettime(CLOCK_MONOTONIC) through bun:ffi: the kernel's own floor for a
// lock, timed on a clock that two processes share.
import { dlopen, FFIType, ptr } from "bun:ffi";

export const LOCK_EX = 2;
export const LOCK_UN = 8;
const CLOCK_MONOTONIC = process.platform === "darwin" ? 6 : 1;

const libc = dlopen(process.platform === "darwin" ? "libc.dylib" : "libc.so.6", {
  flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
});

export function flock(fd: number, op: number): void {
  if (libc.symbols.flock(fd, op) !== 0) throw new Error(`flock(${fd}, ${op}) failed`);
}

const ts = new BigInt64Array(2);
/** CLOCK_MONOTONIC in nanoseconds: the same clock in every process on the machine. */
export function monotonicNs(): bigint {
  libc.symbols.clock_gettime(CLOCK_MONOTONIC, ptr(ts));
  return ts[0]! * 1_000_000_000n + ts[1]!;
}
