#!/usr/bin/env node
// The package's command. Runs the compiled CLI in dist/ (built by `npm install`
// through the `prepare` script, or `npm run build`) when it matches src/
// exactly; otherwise — no build yet, or src/ edited since — runs src/ through
// tsx, which compiles TypeScript at every start: slower, same behaviour.
import module from "node:module";
import os from "node:os";
import path from "node:path";
import { compiledIsFresh, ENTRY } from "./compiled-cli.mjs";

// Node ≥ 22.1 keeps V8's compiled code of the modules on disk, so a start
// parses and compiles less (Node 20 has no such cache). In the user's own
// ~/.cache rather than Node's default under the shared temporary folder, where
// another local user could make the folder first and plant compiled code in it.
// NODE_COMPILE_CACHE picks another folder; NODE_DISABLE_COMPILE_CACHE=1 turns
// it off; a folder that cannot be made leaves the start uncached, not failed.
const cacheHome = (() => {
  try {
    return os.homedir();
  } catch {
    return "";
  }
})();
const cacheDir =
  process.env.NODE_COMPILE_CACHE ||
  (cacheHome ? path.join(cacheHome, ".cache", "recruit-sync", "compile-cache") : undefined);
if (cacheDir) module.enableCompileCache?.(cacheDir);

let main;
if (process.env.RECRUIT_SYNC_FROM_SOURCE !== "1" && compiledIsFresh()) {
  // The compiled CLI is a bundle: its stack traces name chunks. Where the CLI
  // prints a stack (--verbose, DEBUG) its source maps make them name src/.
  if (process.argv.includes("--verbose") || process.env.DEBUG) process.setSourceMapsEnabled(true);
  ({ main } = await import(ENTRY));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/cli/main.ts"));
}
process.exitCode = await main(process.argv);
