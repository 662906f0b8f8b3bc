/**
 * The emulator's CPU for an import (not part of npm test): what the service's
 * side of a rehearsed import costs on the cores it shares with the CLI.
 *
 *   npx tsx bench/emulator-import-bench.ts                      # 300 requests of 1,000 people, 4 runs
 *   npx tsx bench/emulator-import-bench.ts --before DIR --rounds 8   # DIR's emulator as a second side
 *
 * Each run starts bench/helpers/emulator-process.ts in a process of its own
 * (fresh seeded store, rate limit off), then POSTs `--requests` bodies of
 * 1,000 new people to study_1's participants/import, two in flight as the CLI
 * sends them. The people are the rows of import-bench.ts's HubSpot file as
 * the CLI's `--preset hubspot --phone-country US` sends them (captured from a
 * dry run's requests file): email, firstName, lastName, phone in E.164, every
 * third an additional phone, every tenth an additional email,
 * lastContactDate, in that key order. The figures are the emulator's CPU
 * seconds over those requests, from /proc: the whole process (garbage
 * collection threads included) and its main thread. With `--before DIR` (a
 * tree with its own node_modules) the two sides alternate, the side that goes
 * first swapping each round, and the medians of each are printed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { z } from "zod";

const { values: args } = parseArgs({
  options: {
    requests: { type: "string", default: "300" },
    rounds: { type: "string", default: "4" },
    before: { type: "string" },
  },
});
const REQUESTS = Number(args.requests);
const ROUNDS = Number(args.rounds);
const PER_REQUEST = 1000;
const IN_FLIGHT = 2;
const TOKEN = "bench-token";
const HERE = path.resolve(import.meta.dirname, "..");

const FIRST = ["Ann", "Bob", "Chloé", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "José", "Kai", "Lena"];
const LAST = ["Lee", "Müller", "O'Brien", "Patel", "Rossi", "Smith", "Tanaka", "Nguyen", "García"];

/** Row `i` of import-bench.ts's HubSpot file, as the CLI's request carries it. */
function person(i: number): Record<string, unknown> {
  const p: Record<string, unknown> = {
    email: `person${i}@example.org`,
    firstName: FIRST[i % FIRST.length],
    lastName: LAST[(i * 7) % LAST.length],
    phone: `+1415555${String(i % 10_000).padStart(4, "0")}`,
  };
  if (i % 3 === 0) p.additionalPhones = [`+1650555${String((i * 13) % 10_000).padStart(4, "0")}`];
  if (i % 10 === 0) p.additionalEmails = [`p${i}@home.example.net`];
  p.lastContactDate = `2024-03-${String((i % 28) + 1).padStart(2, "0")}`;
  return p;
}

const bodies: string[] = [];
for (let r = 0; r < REQUESTS; r++) {
  const people = [];
  for (let k = 0; k < PER_REQUEST; k++) people.push(person(r * PER_REQUEST + k));
  bodies.push(JSON.stringify({ people }));
}

/** CPU seconds (utime + stime at the kernel's 100 ticks a second) of a process or one of its threads. */
async function cpuSeconds(statFile: string): Promise<number> {
  const stat = await readFile(statFile, "utf8");
  // Fields after the command name (which may hold spaces): utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const Ready = z.object({ origin: z.string(), baseUrl: z.string() });

interface Run {
  processS: number;
  mainS: number;
  wallS: number;
}

/** One run: a fresh emulator from `root`, every body posted, its CPU over the posting. */
async function run(root: string): Promise<Run> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "bench/helpers/emulator-process.ts", "--token", TOKEN, "--participants", "0"],
    { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
  );
  try {
    const line = await new Promise<string>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`the emulator of ${root} exited with ${code} at start`)));
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", resolve);
    });
    const { baseUrl } = Ready.parse(JSON.parse(line));
    const url = `${baseUrl}/studies/study_1/participants/import`;
    const pid = child.pid as number;
    const whole = `/proc/${pid}/stat`;
    const main = `/proc/${pid}/task/${pid}/stat`;
    // Let the start's leftover work (compilation, sweeping on helper threads) finish first.
    await new Promise((r) => setTimeout(r, 500));
    const [process0, main0] = [await cpuSeconds(whole), await cpuSeconds(main)];
    const started = performance.now();
    let next = 0;
    const sender = async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const res = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body,
        });
        const text = await res.text();
        if (res.status !== 200) throw new Error(`import answered ${res.status}: ${text.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    const wallS = (performance.now() - started) / 1000;
    return {
      processS: (await cpuSeconds(whole)) - process0,
      mainS: (await cpuSeconds(main)) - main0,
      wallS,
    };
  } finally {
    if (child.exitCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const sides = [
  { label: "this tree", root: HERE },
  ...(args.before ? [{ label: "before", root: path.resolve(args.before) }] : []),
];
const runs = new Map<string, Run[]>(sides.map((s) => [s.label, []]));
console.log(
  `emulator CPU for ${REQUESTS} imports of ${PER_REQUEST} new people (${IN_FLIGHT} in flight), ${ROUNDS} round(s)${args.before ? `, before = ${args.before}` : ""}:`,
);
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 ? [...sides].reverse() : sides) {
    const r = await run(side.root);
    runs.get(side.label)?.push(r);
    console.log(
      `  ${side.label.padEnd(10)} process ${r.processS.toFixed(2)} s, main thread ${r.mainS.toFixed(2)} s, wall ${r.wallS.toFixed(2)} s`,
    );
  }
}
const medians = sides.map((s) => {
  const rs = runs.get(s.label) ?? [];
  return { label: s.label, process: median(rs.map((r) => r.processS)), main: median(rs.map((r) => r.mainS)) };
});
for (const m of medians) {
  console.log(
    `  median ${m.label.padEnd(10)} process ${m.process.toFixed(2)} s, main thread ${m.main.toFixed(2)} s`,
  );
}
const [after, before] = medians;
if (after && before) {
  const pct = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(0)}%`;
  console.log(
    `  this tree against before: process ${pct(after.process, before.process)}, main thread ${pct(after.main, before.main)}`,
  );
}
