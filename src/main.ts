#!/usr/bin/env bun
// Entry point: run the CLI. `bun src/main.ts ARGS` behaves exactly as the compiled binary.
import { main } from "./cli/index.ts";

await main(process.argv.slice(2));
