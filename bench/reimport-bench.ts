/**
 * Change-only re-imports end to end: a HubSpot-shaped file of N rows is
 * imported once with `recruit-sync import --inline` (not timed), then a
 * second file — the same people shuffled, 2% of them with a new last name,
 * 1% new — is re-imported by the CLI (through the bin, a child process) and
 * by the naive script (bench/naive-import.mjs: csv-parse, 500 a batch, two in
 * flight), against the same emulator in its own process (rate limit off).
 *
 * Prints per side the wall time and the import requests the emulator
 * answered, the ratios naive ÷ CLI, and checks:
 *   - the CLI's requests ≤ ⌈(changed + new) / 1000⌉ + 5;
 *   - every changed and every new person is in the service afterwards, as
 *     the CLI sent them (checked before the naive script runs);
 *   - naive requests ÷ CLI requests ≥ 10.
 * And the change state's memory: MEMORY USAGE of every state key ÷ people.
 *
 * Under a quota (`--quota 50/5`, answers delayed 60–120 ms: `--latency
 * 60-120`), as a nightly re-import meets the service: the first import still
 * runs without a limit (not timed); before each timed re-import the emulator
 * takes the quota on a fresh window and the governor's learned state is
 * cleared (the change state stays), and the naive script waits out each
 * 429's Retry-After. The time ratio is then the one a user sees.
 *
 *   npm run bench -- reimport                 # 300k rows, 3 rounds
 *   npx tsx bench/reimport-bench.ts 300000 --rounds 1 --quota 50/5
 *   npx tsx bench/reimport-bench.ts 100000 --rounds 1
 *   npx tsx bench/reimport-bench.ts 300000 --rounds 1 --cpu-prof /tmp/prof   # the CLI re-import's profiles
 *
 * Needs Redis on REDIS_URL; keys go under a prefix of their own and are
 * deleted at the end. Not part of npm test. Figures are in docs/engineering/imports-benchmark.md.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { deleteKeysByPrefix } from "../src/runtime/delete-keys.ts";
import {
  type EmulatorProcess,
  hubspotImportCommand,
  REDIS_URL,
  startEmulatorProcess,
  TOKEN,
} from "./helpers/cli-run.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt === -1 ? 3 : Number(args[roundsAt + 1]);
const profAt = args.indexOf("--cpu-prof");
/** Where the CLI's re-imports write V8 CPU profiles, when asked. */
const PROF_DIR = profAt === -1 ? undefined : path.resolve(args[profAt + 1] ?? "cpu-profiles");
const ROWS = Number(
  // The values of --rounds and --cpu-prof are not the size (an absent flag's index is -1: not 0's either).
  args.find(
    (a, i) =>
      /^\d+$/.test(a) && (roundsAt === -1 || i !== roundsAt + 1) && (profAt === -1 || i !== profAt + 1),
  ) ?? 300_000,
);
const quotaAt = args.indexOf("--quota");
/** Requests per window and window seconds the emulator holds during the timed re-imports, when asked. */
const QUOTA = quotaAt === -1 ? undefined : /^(\d+)\/(\d+)s?$/.exec(args[quotaAt + 1] ?? "");
if (quotaAt !== -1 && !QUOTA) throw new Error("--quota: expected REQUESTS/SECONDS, e.g. 50/5");
const latencyAt = args.indexOf("--latency");
const LATENCY = (latencyAt === -1 ? "60-120" : (args[latencyAt + 1] ?? "")).split("-").map(Number);
const STUDY = "study_1";
/** People a request may carry (the contract's 1,000): the requests the changed and new people need are counted at it. */
const BATCH = 1000;

const FIRST = ["Ann", "Bob", "Chloé", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "José", "Kai", "Lena"];
const LAST = ["Lee", "Müller", "O'Brien", "Patel", "Rossi", "Smith", "Tanaka", "Nguyen", "García"];
const STAGE = ["customer", "lead", "subscriber", "opportunity"];
const HEADER =
  '"Record ID","First Name","Last Name","Email","Phone Number","Lifecycle Stage","Company Name","Research opt-out"\n';

const isChanged = (i: number) => i < ROWS && i % 50 === 0;
const lastName = (i: number, second: boolean) =>
  second && isChanged(i) ? `Changed${i}` : (LAST[(i * 7) % LAST.length] as string);
const email = (i: number) => `person${i}@example.org`;
const row = (i: number, second: boolean) =>
  `"${51_000 + i}","${FIRST[i % FIRST.length]}","${lastName(i, second)}","${email(i)}","(415) 555-${String(i % 10_000).padStart(4, "0")}","${STAGE[i % STAGE.length]}","Acme ${i % 97}","no"\n`;

/** The first file: people 0…ROWS-1 in order. The second: 1% more, shuffled, 2% with a new last name. */
async function generate(file: string, second: boolean): Promise<void> {
  const count = second ? ROWS + Math.floor(ROWS / 100) : ROWS;
  const ids = Uint32Array.from({ length: count }, (_v, i) => i);
  if (second) {
    let seed = 7;
    for (let i = count - 1; i > 0; i--) {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      const j = seed % (i + 1);
      const t = ids[i] as number;
      ids[i] = ids[j] as number;
      ids[j] = t;
    }
  }
  const out = createWriteStream(file);
  out.write(HEADER);
  let buf = "";
  for (const i of ids) {
    buf += row(i, second);
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await once(out, "drain");
      buf = "";
    }
  }
  out.end(buf);
  await once(out, "finish");
}

async function timed(command: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  const started = performance.now();
  const child = spawn(command[0] as string, command.slice(1), {
    cwd,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout?.on("data", (d) => {
    stdout += String(d);
  });
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`${command.join(" ")} exited with ${code}:\n${stdout}`);
  return performance.now() - started;
}

const answered = async (emu: EmulatorProcess) => (await emu.requests("importParticipants"))["200"] ?? 0;

/** Before a timed re-import under --quota: the quota on a fresh window, answers late, nothing learned by the governor. */
async function throttle(emu: EmulatorProcess, redis: Redis, prefix: string): Promise<void> {
  if (!QUOTA) return;
  await emu.admin("/rate-limit", { requests: Number(QUOTA[1]), windowSeconds: Number(QUOTA[2]) });
  await emu.admin("/faults", {
    route: "importParticipants",
    latencyMs: { min: LATENCY[0], max: LATENCY[1] },
  });
  await deleteKeysByPrefix(redis, `${prefix}:governor:`);
}

/** Every changed and new person as the second file has them, asked of the emulator 16 at a time. */
async function checkChanges(emu: EmulatorProcess): Promise<number> {
  const ids: number[] = [];
  for (let i = 0; i < ROWS + Math.floor(ROWS / 100); i++) if (i >= ROWS || isChanged(i)) ids.push(i);
  let next = 0;
  const wrong: number[] = [];
  const worker = async () => {
    while (next < ids.length) {
      const i = ids[next++] as number;
      const res = await fetch(`${emu.origin}/__emulator/people/${email(i)}`, { headers: emu.adminHeaders });
      const body = res.ok
        ? ((await res.json()) as { people: { lastName: string | null }[] })
        : { people: [] };
      if (body.people[0]?.lastName !== lastName(i, true)) wrong.push(i);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  if (wrong.length > 0)
    throw new Error(`${wrong.length} changed or new people are not in the service as sent`);
  return ids.length;
}

/** MEMORY USAGE of every key of the change state under `prefix`, summed. */
async function stateBytes(redis: Redis, prefix: string): Promise<{ bytes: number; keys: number }> {
  let cursor = "0";
  let bytes = 0;
  let keys = 0;
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}:sent:*`, "COUNT", 1000);
    cursor = next;
    for (const key of found) {
      bytes += Number(await redis.call("MEMORY", "USAGE", key, "SAMPLES", "0"));
      keys++;
    }
  } while (cursor !== "0");
  return { bytes, keys };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "reimport-bench-"));
  const emulator = await startEmulatorProcess("study_bench", 0);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const prefixes: string[] = [];
  try {
    const firstFile = path.join(dir, "first.csv");
    const secondFile = path.join(dir, "second.csv");
    await generate(firstFile, false);
    await generate(secondFile, true);
    const needed = ROWS / 50 + Math.floor(ROWS / 100);
    const limit = Math.ceil(needed / BATCH) + 5;
    console.log(
      `change-only re-import of ${ROWS.toLocaleString("en")} people (${(ROWS / 50).toLocaleString("en")} changed, ${Math.floor(ROWS / 100).toLocaleString("en")} new, shuffled): recruit-sync import --inline (bin) vs the naive script, emulator in its own process (${QUOTA ? `re-imports under ${QUOTA[1]} requests per ${QUOTA[2]} s, answers ${LATENCY[0]}–${LATENCY[1]} ms late` : "rate limit off"}), ${ROUNDS} rounds, medians`,
    );
    const cli: { ms: number; requests: number; phases: { hash: number; read: number; send: number } }[] = [];
    const naive: { ms: number; requests: number }[] = [];
    let memory = { bytes: 0, keys: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      const prefix = `bench-${randomUUID()}`;
      prefixes.push(prefix);
      const project = path.join(dir, `round-${r}`);
      await mkdir(path.join(project, "config"), { recursive: true });
      await writeFile(
        path.join(project, "config/default.yaml"),
        `service: { baseUrl: ${emulator.baseUrl} }\nredis: { url: ${REDIS_URL}, prefix: ${prefix} }\nwarehouse: { url: "file:./data" }\npaths: { jobsDir: ${path.join(ROOT, "jobs")}, dataDir: ./data }\n`,
      );
      const env = {
        ...process.env,
        NODE_ENV: "",
        RECRUIT_SYNC_BASE_URL: emulator.baseUrl,
        RECRUIT_SYNC_API_TOKEN: TOKEN,
        REDIS_URL,
        LOG_LEVEL: "warn",
      };
      const cliImport = (file: string, profile = false) =>
        hubspotImportCommand(file, {
          study: STUDY,
          report: path.join(project, "report.json"),
          root: ROOT,
          cpuProfDir: profile ? PROF_DIR : undefined,
        });
      await emulator.admin("/reset", {});
      // A limit set for the previous round's re-imports outlives /reset: the first import runs without one.
      if (QUOTA) await emulator.admin("/rate-limit", { off: true });
      await timed(cliImport(firstFile), project, env);
      if (r === 0) memory = await stateBytes(redis, prefix);

      await throttle(emulator, redis, prefix);
      const before = await answered(emulator);
      const ms = await timed(cliImport(secondFile, true), project, env);
      const requests = (await answered(emulator)) - before;
      const report = JSON.parse(await readFile(path.join(project, "report.json"), "utf8")) as {
        imported: number;
        unchanged: number;
        phasesMs: { hash: number; read: number; send: number };
      };
      if (report.imported !== needed || report.unchanged !== ROWS - ROWS / 50) {
        throw new Error(`the CLI imported ${report.imported} and left ${report.unchanged} unchanged`);
      }
      const checked = await checkChanges(emulator);
      if (r === 0)
        console.log(`  checked: all ${checked.toLocaleString("en")} changed and new people in the service`);
      cli.push({ ms, requests, phases: report.phasesMs });

      await throttle(emulator, redis, prefix);
      const naiveBefore = await answered(emulator);
      const naiveMs = await timed(
        [
          process.execPath,
          path.join(ROOT, "bench/naive-import.mjs"),
          secondFile,
          emulator.baseUrl,
          TOKEN,
          STUDY,
        ],
        ROOT,
        env,
      );
      naive.push({ ms: naiveMs, requests: (await answered(emulator)) - naiveBefore });
    }
    const cliMs = median(cli.map((c) => c.ms));
    const naiveMs = median(naive.map((c) => c.ms));
    const cliRequests = Math.max(...cli.map((c) => c.requests));
    const naiveRequests = Math.min(...naive.map((c) => c.requests));
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `  recruit-sync import --inline  ${s(cliMs)} (${cli.map((c) => s(c.ms)).join(", ")})  ${cliRequests} import requests`,
    );
    console.log(
      `  naive script                  ${s(naiveMs)} (${naive.map((c) => s(c.ms)).join(", ")})  ${naiveRequests} import requests`,
    );
    const phase = (k: "hash" | "read" | "send") => s(median(cli.map((c) => c.phases[k])));
    console.log(
      `  CLI phases (medians)          hash ${phase("hash")}, read and validate ${phase("read")}, compare, merge and send ${phase("send")}; the rest is process start and exit`,
    );
    console.log(
      `  CLI requests                  ${cliRequests} ≤ ⌈${needed.toLocaleString("en")} / ${BATCH}⌉ + 5 = ${limit}: ${cliRequests <= limit ? "met" : "NOT met"}`,
    );
    const ratio = naiveRequests / Math.max(cliRequests, 1);
    console.log(
      `  requests, naive ÷ CLI         ${ratio.toFixed(1)}×  goal ≥ 10: ${ratio >= 10 ? "met" : "NOT met"}`,
    );
    console.log(`  time, naive ÷ CLI             ${(naiveMs / cliMs).toFixed(2)}×`);
    console.log(
      `  change state in Redis         ${(memory.bytes / 2 ** 20).toFixed(1)} MB in ${memory.keys} keys for ${ROWS.toLocaleString("en")} people: ${(memory.bytes / ROWS).toFixed(1)} bytes a person (MEMORY USAGE)`,
    );
    if (cliRequests > limit || ratio < 10) process.exitCode = 1;
  } finally {
    await emulator.stop();
    for (const prefix of prefixes) await deleteKeysByPrefix(redis, prefix);
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
