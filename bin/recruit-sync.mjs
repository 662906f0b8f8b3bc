#!/usr/bin/env node
// The package's command. Runs the compiled CLI in dist/ (built by `npm install`
// through the `prepare` script, or `npm run build`) when it matches src/
// exactly; otherwise — no build yet, or src/ edited since — runs src/ through
// tsx, which compiles TypeScript at every start: slower, same behaviour.
import { compiledIsFresh, ENTRY } from "./compiled-cli.mjs";

let main;
if (process.env.RECRUIT_SYNC_FROM_SOURCE !== "1" && compiledIsFresh()) {
  ({ main } = await import(ENTRY));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/cli/main.ts"));
}
process.exitCode = await main(process.argv);
