/**
 * `npm run bench`: every benchmark of bench/, one after another, each in its
 * own process so one's memory does not weigh on the next. Each prints its
 * figure and the ratio against the bare baseline it measures in the same run.
 * Not part of npm test.
 *
 *   npm run bench                 # all
 *   npm run bench -- import sink  # NAME-bench.ts when there is one, else those whose file name contains the word
 *   npm run bench -- export-rate --shape 100/5   # from the first --flag on, arguments go to the bench
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const dir = path.dirname(new URL(import.meta.url).pathname);
const argv = process.argv.slice(2);
const firstFlag = argv.findIndex((a) => a.startsWith("-"));
const filters = firstFlag === -1 ? argv : argv.slice(0, firstFlag);
const forwarded = firstFlag === -1 ? [] : argv.slice(firstFlag);
const all = readdirSync(dir).filter((f) => f.endsWith("-bench.ts"));
// "export" names export-bench.ts, not every bench with "export" in its name.
const benches = all
  .filter(
    (f) =>
      filters.length === 0 ||
      filters.some((w) => (all.includes(`${w}-bench.ts`) ? f === `${w}-bench.ts` : f.includes(w))),
  )
  .sort();

let failed = 0;
for (const file of benches) {
  process.stdout.write(`\n===== ${file} =====\n`);
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(dir, file), ...forwarded], {
      stdio: "inherit",
    });
    child.on("exit", (c) => resolve(c ?? 1));
  });
  if (code !== 0) {
    failed++;
    process.stdout.write(`${file} exited with ${code}\n`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
