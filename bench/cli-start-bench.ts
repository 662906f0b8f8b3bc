/**
 * CLI start-up (not part of npm test): `npm run bench -- cli-start`.
 *
 * Times `recruit-sync --help` end to end through the package's bin — process
 * start to exit, as a user's shell sees it — against a bare `node -e 0`
 * measured in the same run, the two sides alternating (which goes first swaps
 * every round). Also times the bin running the sources through tsx
 * (RECRUIT_SYNC_FROM_SOURCE=1: what a missing or stale dist/ gives, and how
 * every start ran before dist/). Prints the median and best of each, the ratio
 * of the medians, the goal line (< 0.3 s) and the peak RSS of `--help`.
 *
 *   npx tsx bench/cli-start-bench.ts [--rounds 15]
 *
 * dist/ is built first when it does not match src/, as `npm install` would.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import { compiledIsFresh } from "../bin/compiled-cli.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const BIN = path.join(ROOT, "bin/recruit-sync.mjs");
const GOAL_SECONDS = 0.3;
const { values } = parseArgs({ options: { rounds: { type: "string", default: "15" } } });
const ROUNDS = Number(values.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 2)
  throw new Error(`--rounds must be an integer ≥ 2, got ${values.rounds}`);

/** Runs node with `args` to its exit; resolves to the wall time in seconds. */
function timed(args: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: "ignore",
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code === 0) resolve(seconds);
      else reject(new Error(`node ${args.join(" ")} exited with ${code}`));
    });
  });
}

/** Peak RSS in MB of `node ARGS`, read by the process itself as it exits (in a run of its own, not timed). */
function peakRssMb(args: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  const report = `data:text/javascript,process.on("exit",()=>process.stderr.write("maxRSS="+process.resourceUsage().maxRSS+"\\n"))`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", report, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", () => {
      const kb = Number(/maxRSS=(\d+)/.exec(stderr)?.[1]);
      if (Number.isFinite(kb)) resolve(kb / 1024);
      else reject(new Error(`no maxRSS from node ${args.join(" ")}: ${stderr}`));
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const ms = (seconds: number) => `${(seconds * 1000).toFixed(0).padStart(5)} ms`;

if (!compiledIsFresh()) {
  console.log("dist/ is missing or does not match src/: building it, as npm install does");
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "scripts/build-dist.mjs")], { stdio: "inherit" });
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the build exited with ${code}`))));
  });
}

const sides = {
  node: { label: "node -e 0", args: ["-e", "0"], env: {} },
  help: { label: "recruit-sync --help", args: [BIN, "--help"], env: {} },
  source: {
    label: "recruit-sync --help, sources through tsx",
    args: [BIN, "--help"],
    env: { RECRUIT_SYNC_FROM_SOURCE: "1" },
  },
} as const;
type Side = keyof typeof sides;
const times: Record<Side, number[]> = { node: [], help: [], source: [] };

// One untimed start of each fills the OS file cache and tsx's compile cache, as on a machine in use.
for (const side of Object.values(sides)) await timed([...side.args], side.env);
for (let round = 0; round < ROUNDS; round++) {
  const order: Side[] = round % 2 === 0 ? ["node", "help", "source"] : ["source", "help", "node"];
  for (const name of order) times[name].push(await timed([...sides[name].args], sides[name].env));
}

console.log(`CLI start, ${ROUNDS} rounds, sides alternating (node ${process.version}, ${process.platform})`);
for (const [name, side] of Object.entries(sides) as [Side, (typeof sides)[Side]][]) {
  console.log(
    `  ${side.label.padEnd(42)} median ${ms(median(times[name]))}   best ${ms(Math.min(...times[name]))}`,
  );
}
const help = median(times.help);
console.log(`  ratio --help ÷ node -e 0 (medians): ${(help / median(times.node)).toFixed(2)}`);
console.log(`  ratio sources through tsx ÷ --help (medians): ${(median(times.source) / help).toFixed(2)}`);
console.log(
  `  goal: recruit-sync --help < ${GOAL_SECONDS} s: ${help < GOAL_SECONDS ? "met" : "MISSED"} (median ${help.toFixed(3)} s)`,
);
const rss = await peakRssMb([BIN, "--help"]);
const rssSource = await peakRssMb([BIN, "--help"], sides.source.env);
const rssNode = await peakRssMb(["-e", "0"]);
console.log(
  `  peak RSS: --help ${rss.toFixed(0)} MB; sources through tsx ${rssSource.toFixed(0)} MB; node -e 0 ${rssNode.toFixed(0)} MB`,
);
