// The pools' entry: the core (pools.ts) and the shapes and constants callers use (types.ts).
export { Pools } from "./pools.ts";
export * from "./types.ts";
