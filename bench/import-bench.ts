/**
 * Imports end to end, as a user runs them: the real `recruit-sync import
 * --inline` through the bin (a child process) into the emulator (its own
 * process, rate limit off), against a naive script (bench/naive-import.mjs:
 * csv-parse objects, four columns, 500-row batches, two requests in flight,
 * no validation) importing the same HubSpot-shaped file into the same
 * emulator. Sides alternate, the emulator's store is reset before each run.
 * Prints the medians, the ratio naive time ÷ CLI time (goal ≥ 0.9) and the
 * CLI process's peak RSS (GNU time's maximum resident set; goal ≤ 200 MB).
 *
 *   npm run bench -- import                 # 300k and 1M rows, 3 rounds
 *   npx tsx bench/import-bench.ts 300000 --rounds 5
 *   npx tsx bench/import-bench.ts 300000 --rounds 1 --cpu-prof /tmp/prof   # the CLI's profiles
 *   npx tsx bench/import-bench.ts 300000 --no-dry-run   # without the second part
 *
 * Under a quota (`--quota 50/5`, default 200,000 rows, answers delayed
 * 60–120 ms: `--latency 60-120`): the emulator holds that rate limit, every
 * run starts on a fresh window with the rate governor's state cleared (a
 * first import), the naive script waits out each 429's Retry-After, and the
 * figure is the time the contract's 1,000-people requests allow,
 * floor((⌈rows / 1000⌉ − 1) / quota) × window, over the CLI's import time
 * (its report's duration; the process's wall time is printed beside it).
 *
 *   npm run bench -- import --quota 50/5 --rounds 3
 *
 * Comparing two versions of the CLI: `--before DIR` runs DIR's bin (a tree
 * built with `npm run build`) as a third side, the sides rotating from round
 * to round; `--no-naive` leaves the naive script out. Each run's line has the
 * load average when it ended.
 *
 * `--same-fields`: the CLI maps the four columns the naive script sends
 * (Email, First Name, Last Name, Phone Number, values as they are) through a
 * job definition instead of the HubSpot preset, whose extra fields (Last
 * Contacted as a date, mobile phones and extra emails, phones to E.164) cost
 * both the CLI and the emulator more than the naive script's four: the two
 * sides then send the same people with the same fields.
 *
 *   npx tsx bench/import-bench.ts 1000000 --same-fields
 *
 * Then, as a second line, the dry-run figure: bench/import-dry-run-bench.ts
 * (our pipeline up to finished request bodies against bare csv-parse, no HTTP)
 * at the largest size.
 *
 * BENCH_CLI_NODE_OPTIONS, when set, is NODE_OPTIONS for the CLI's runs alone
 * (a preload that samples memory, say); the emulator and the naive script keep
 * the bench's own environment.
 *
 * Needs Redis on REDIS_URL (default redis://127.0.0.1:6379) for the ledger;
 * keys go under a prefix of their own and are deleted at the end.
 * Not part of npm test. Figures are in docs/engineering/performance-log.md.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { deleteKeysByPrefix } from "../src/runtime/delete-keys.ts";
import { hubspotImportCommand, startEmulatorProcess, TOKEN } from "./helpers/cli-run.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt === -1 ? 3 : Number(args[roundsAt + 1]);
const sizes = args
  .filter((a, i) => /^\d+$/.test(a) && !["--rounds", "--concurrency"].includes(args[i - 1] ?? ""))
  .map(Number);
const profAt = args.indexOf("--cpu-prof");
/** Where the CLI's runs write V8 CPU profiles (main thread and parse worker), when asked. */
const PROF_DIR = profAt === -1 ? undefined : path.resolve(args[profAt + 1] ?? "cpu-profiles");
const quotaAt = args.indexOf("--quota");
/** Requests per window and window seconds, when the emulator holds a rate limit. */
const QUOTA = quotaAt === -1 ? undefined : parseShape(args[quotaAt + 1] ?? "");
const latencyAt = args.indexOf("--latency");
const LATENCY = (latencyAt === -1 ? "60-120" : (args[latencyAt + 1] ?? "")).split("-").map(Number) as [
  number,
  number,
];
const concurrencyAt = args.indexOf("--concurrency");
/** Config `imports.concurrency` for the CLI (default 2, the shipped default). */
const CONCURRENCY = concurrencyAt === -1 ? 2 : Number(args[concurrencyAt + 1]);
const beforeAt = args.indexOf("--before");
/** Another tree (built with npm run build) whose CLI runs as a third side, alternating: before/after in one run. */
const BEFORE = beforeAt === -1 ? undefined : path.resolve(args[beforeAt + 1] ?? "");
/** --no-naive: the CLI sides only (quicker when comparing two versions of the CLI). */
const NAIVE = !args.includes("--no-naive");
/** --same-fields: the CLI maps the naive script's four columns (FOUR_COLUMNS) instead of the HubSpot preset. */
const SAME_FIELDS = args.includes("--same-fields");
/** The naive script's mapping as a job definition: the same four fields, values as they are. */
const FOUR_COLUMNS = `kind: import
target: { studyId: study_1 }
columns:
  - { column: Email, to: email }
  - { column: First Name, to: firstName }
  - { column: Last Name, to: lastName }
  - { column: Phone Number, to: phone }
`;
type Side = "cli" | "naive" | "before";
const SIZES = sizes.length > 0 ? sizes : QUOTA ? [200_000] : [300_000, 1_000_000];
const DRY_RUN = !args.includes("--no-dry-run") && QUOTA === undefined;

function parseShape(text: string): { requests: number; windowS: number } {
  const m = /^(\d+)\/(\d+)s?$/.exec(text);
  if (!m) throw new Error(`--quota ${text}: expected REQUESTS/SECONDS, e.g. 50/5`);
  return { requests: Number(m[1]), windowS: Number(m[2]) };
}
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const STUDY = "study_1";

const FIRST = ["Ann", "Bob", "Chloé", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "José", "Kai", "Lena"];
const LAST = ["Lee", "Müller", "O'Brien", "Patel", "Rossi", "Smith", "Tanaka", "Nguyen", "García"];
const COMPANY = ["Acme, Inc.", "Globex", "Initech", "Umbrella Corp", "Stark Industries"];
const TITLE = ["Product Manager", "Engineer", "Designer", "Analyst", "Director of Research"];
const STAGE = ["customer", "lead", "subscriber", "opportunity"];

/** A HubSpot contacts export (the columns of samples/hubspot-contacts.csv); the same file every run. */
async function generate(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  out.write(
    '"Record ID","First Name","Last Name","Email","Phone Number","Mobile Phone Number","Lifecycle Stage","Company Name","Job Title","Last Contacted","Additional email addresses","Research opt-out","Create Date"\n',
  );
  let buf = "";
  for (let i = 0; i < rows; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[(i * 7) % LAST.length] as string;
    const phone = `(415) 555-${String(i % 10_000).padStart(4, "0")}`;
    const mobile = i % 3 === 0 ? `+1 650 555 ${String((i * 13) % 10_000).padStart(4, "0")}` : "";
    const day = String((i % 28) + 1).padStart(2, "0");
    const extra = i % 10 === 0 ? `p${i}@home.example.net` : "";
    buf += `"${51_000 + i}","${first}","${last}","person${i}@example.org","${phone}","${mobile}","${STAGE[i % STAGE.length]}","${COMPANY[i % COMPANY.length]}","${TITLE[i % TITLE.length]}","2024-03-${day} 14:22","${extra}","no","2023-11-02 09:10"\n`;
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await once(out, "drain");
      buf = "";
    }
  }
  out.end(buf);
  await once(out, "finish");
}

interface Run {
  ms: number;
  /** The CLI's report's phases (hash, read = reading the file, send = from the first request to the end), ms. */
  phases?: { hash: number; read: number; send: number };
  /** The CLI's report's duration, ms. */
  importMs?: number;
  /** Import requests the emulator answered 200, and 429. */
  answered?: number;
  tooMany?: number;
  /** Peak resident set of the measured process, MB (GNU time %M). */
  rssMb: number;
  /** CPU seconds (user + system) of the measured process (GNU time), and of the emulator and Redis during the run (/proc). */
  cpu?: { process: number; emulator: number; redis: number };
  stdout: string;
  /** Epoch ms when the process was spawned, for the timeline of answers. */
  spawnedAt: number;
}

/** Runs a command under /usr/bin/time; wall time from spawn to exit. */
async function timed(command: string[], cwd: string, env: NodeJS.ProcessEnv, dir: string): Promise<Run> {
  const rssFile = path.join(dir, `rss-${randomUUID()}.txt`);
  const started = performance.now();
  const spawnedAt = Date.now();
  const child = spawn("/usr/bin/time", ["-f", "%M %U %S", "-o", rssFile, ...command], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout?.on("data", (d) => {
    stdout += String(d);
  });
  const [code] = await once(child, "exit");
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${command.join(" ")} exited with ${code}:\n${stdout}`);
  const [kb, user, sys] = ((await readFile(rssFile, "utf8")).trim().split("\n").pop() ?? "")
    .split(" ")
    .map(Number);
  return {
    ms,
    rssMb: (kb ?? 0) / 1024,
    stdout,
    spawnedAt,
    cpu: { process: (user ?? 0) + (sys ?? 0), emulator: 0, redis: 0 },
  };
}

/** CPU seconds a process has used so far (utime + stime from /proc/PID/stat, at the kernel's 100 ticks a second). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces), from field 3 on: utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "import-e2e-bench-"));
  const prefix = `bench-${randomUUID()}`;
  // The seeded workspace (study_1 among it) and no extra participants: the bench imports into study_1.
  const emulator = await startEmulatorProcess("study_bench", 0);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1]);
  try {
    await mkdir(path.join(dir, "config"));
    await writeFile(
      path.join(dir, "config/default.yaml"),
      `service: { baseUrl: ${emulator.baseUrl} }\nredis: { url: ${REDIS_URL}, prefix: ${prefix} }\nwarehouse: { url: "file:./data" }\npaths: { jobsDir: ${path.join(ROOT, "jobs")}, dataDir: ./data }\nimports: { concurrency: ${CONCURRENCY} }\n`,
    );
    const env = {
      ...process.env,
      NODE_ENV: "",
      RECRUIT_SYNC_BASE_URL: emulator.baseUrl,
      RECRUIT_SYNC_API_TOKEN: TOKEN,
      REDIS_URL,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    };
    const admin = async (what: string, body?: unknown) => {
      const res = await fetch(`${emulator.origin}/__emulator/${what}`, {
        method: "POST",
        ...(body === undefined
          ? { headers: emulator.adminHeaders }
          : {
              headers: { ...emulator.adminHeaders, "content-type": "application/json" },
              body: JSON.stringify(body),
            }),
      });
      if (!res.ok) throw new Error(`emulator ${what} answered ${res.status}`);
    };
    const reset = async () => {
      await admin("reset");
      if (QUOTA) {
        // A fresh window for every run (setting the limit resets the windows), answers 60–120 ms late.
        await admin("rate-limit", { requests: QUOTA.requests, windowSeconds: QUOTA.windowS });
        await admin("faults", {
          route: "importParticipants",
          latencyMs: { min: LATENCY[0], max: LATENCY[1] },
        });
      }
      // A first import: no ledger, and a governor that has not seen the quota yet.
      await deleteKeysByPrefix(redis, prefix);
    };
    /**
     * When the import answers came, from the process's spawn: the first, and
     * per burst (answers more than 400 ms apart start a new one, which under a
     * binding quota is a window) how many and over how long.
     */
    const timeline = async (spawnedAt: number) => {
      const res = await fetch(`${emulator.origin}/__emulator/requests/journal`, {
        headers: emulator.adminHeaders,
      });
      const { entries } = (await res.json()) as { entries: { at: number; route: string; status: string }[] };
      const at = entries.filter((e) => e.route === "importParticipants").map((e) => e.at - spawnedAt);
      if (at.length === 0) return "no answers";
      const bursts: number[][] = [];
      for (const t of at) {
        const last = bursts.at(-1);
        if (last && t - (last.at(-1) as number) <= 400) last.push(t);
        else bursts.push([t]);
      }
      const s = (ms: number) => (ms / 1000).toFixed(2);
      return `first answer ${s(at[0] as number)} s after spawn; bursts ${bursts.map((b) => `${b.length} in ${s((b.at(-1) as number) - (b[0] as number))} s from ${s(b[0] as number)}`).join(", ")}`;
    };
    const importedBy = async () => {
      const res = await fetch(`${emulator.origin}/__emulator/requests`, { headers: emulator.adminHeaders });
      const counts = (await res.json()) as { byRoute: Record<string, Record<string, number>> };
      return counts.byRoute.importParticipants ?? {};
    };
    console.log(
      `import end to end: recruit-sync import --inline (bin, child process${SAME_FIELDS ? ", the naive script's four columns" : ", HubSpot preset"}) vs a naive script, emulator in its own process (${QUOTA ? `rate limit ${QUOTA.requests}/${QUOTA.windowS}s, answers ${LATENCY[0]}–${LATENCY[1]} ms late` : "rate limit off"}), ${ROUNDS} alternating rounds, medians`,
    );
    for (const rows of SIZES) {
      const file = path.join(dir, `hubspot-${rows}.csv`);
      await generate(file, rows);
      const mb = (await stat(file)).size / 2 ** 20;
      const fourColumns = path.join(dir, "four-columns.yaml");
      if (SAME_FIELDS) await writeFile(fourColumns, FOUR_COLUMNS);
      const cliCommand = (root: string) => {
        const command = hubspotImportCommand(file, {
          study: STUDY,
          report: path.join(dir, "report.json"),
          root,
          force: true,
          cpuProfDir: PROF_DIR,
        });
        if (!SAME_FIELDS) return command;
        // The same command with the job definition in place of the preset, its study and phone country.
        const at = command.indexOf("--preset");
        command.splice(at, 6, "--job", fourColumns);
        return command;
      };
      const cliEnv = process.env.BENCH_CLI_NODE_OPTIONS
        ? { ...env, NODE_OPTIONS: process.env.BENCH_CLI_NODE_OPTIONS }
        : env;
      const cliSide = (root: string) => () => timed(cliCommand(root), dir, cliEnv, dir);
      const sides: Partial<Record<Side, () => Promise<Run>>> = {
        cli: cliSide(ROOT),
        ...(BEFORE ? { before: cliSide(BEFORE) } : {}),
        ...(NAIVE
          ? {
              naive: () =>
                timed(
                  [
                    process.execPath,
                    path.join(ROOT, "bench/naive-import.mjs"),
                    file,
                    emulator.baseUrl,
                    TOKEN,
                    STUDY,
                  ],
                  ROOT,
                  env,
                  dir,
                ),
            }
          : {}),
      };
      const names = Object.keys(sides) as Side[];
      const runs: Record<Side, Run[]> = { cli: [], naive: [], before: [] };
      for (let r = 0; r < ROUNDS; r++) {
        // Alternating: each round starts one side later than the round before.
        const order = names.map((_n, i) => names[(i + r + 1) % names.length] as Side);
        for (const side of order) {
          await reset();
          const before = [await cpuSeconds(emulator.pid), await cpuSeconds(redisPid)];
          const run = await (sides[side] as () => Promise<Run>)();
          if (run.cpu) {
            run.cpu.emulator = (await cpuSeconds(emulator.pid)) - (before[0] as number);
            run.cpu.redis = (await cpuSeconds(redisPid)) - (before[1] as number);
          }
          let expected = Math.ceil(rows / 500);
          if (side !== "naive") {
            const report = JSON.parse(await readFile(path.join(dir, "report.json"), "utf8")) as {
              phasesMs: { hash: number; read: number; send: number };
              durationMs: number;
              requests: number;
              imported: number;
            };
            run.phases = report.phasesMs;
            run.importMs = report.durationMs;
            expected = report.requests;
            if (report.imported !== rows) throw new Error(`${side}: imported ${report.imported} of ${rows}`);
          }
          const calls = await importedBy();
          run.answered = calls["200"] ?? 0;
          run.tooMany = calls["429"] ?? 0;
          const others = Object.keys(calls).filter((k) => k !== "200" && k !== "429");
          if (run.answered !== expected || others.length > 0) {
            throw new Error(
              `${side}: expected ${expected} answered imports, the emulator saw ${JSON.stringify(calls)}`,
            );
          }
          console.log(
            `  round ${r + 1} ${side}: ${(run.ms / 1000).toFixed(2)} s${run.importMs ? ` (import ${(run.importMs / 1000).toFixed(2)} s)` : ""}, ${run.rssMb.toFixed(0)} MB, ${run.answered} requests, ${run.tooMany} × 429, load ${loadavg()[0]?.toFixed(2)}; cpu s: process ${run.cpu?.process.toFixed(2)}, emulator ${run.cpu?.emulator.toFixed(2)}, redis ${run.cpu?.redis.toFixed(2)}`,
          );
          if (QUOTA && side !== "naive") console.log(`    ${await timeline(run.spawnedAt)}`);
          runs[side].push(run);
        }
      }
      const fmt = (xs: Run[]) =>
        `best ${(Math.min(...xs.map((r) => r.ms)) / 1000).toFixed(2)} s; ${xs.map((r) => (r.ms / 1000).toFixed(2)).join(", ")}`;
      console.log(`\n${rows.toLocaleString("en")} rows (${mb.toFixed(0)} MB):`);
      const label: Record<Side, string> = {
        cli: "recruit-sync import --inline ",
        before: `the same, ${path.basename(BEFORE ?? "")}`.padEnd(29),
        naive: "naive script                 ",
      };
      for (const side of names) {
        const t = median(runs[side].map((r) => r.ms));
        console.log(
          `  ${label[side]} ${(t / 1000).toFixed(2)} s  (${fmt(runs[side])})  ${Math.round(rows / (t / 1000)).toLocaleString("en")} rows/s`,
        );
      }
      for (const side of names.filter((n) => n !== "naive")) {
        const phase = (k: "hash" | "read" | "send") =>
          (median(runs[side].map((r) => r.phases?.[k] ?? 0)) / 1000).toFixed(2);
        console.log(
          `  ${side} phases (medians)   hash ${phase("hash")} s, reading the file ${phase("read")} s, first request to the end ${phase("send")} s (they overlap)`,
        );
      }
      for (const side of names.filter((n) => n !== "naive")) {
        const cli = median(runs[side].map((r) => r.ms));
        if (NAIVE) {
          const ratio = median(runs.naive.map((r) => r.ms)) / cli;
          console.log(
            `  ${side}: ratio (naive ÷ cli time)  ${ratio.toFixed(2)}×  goal ≥ 0.9: ${ratio >= 0.9 ? "met" : "NOT met"}`,
          );
        }
        if (QUOTA) {
          const allowed = Math.floor((Math.ceil(rows / 1000) - 1) / QUOTA.requests) * QUOTA.windowS;
          const imp = median(runs[side].map((r) => r.importMs ?? 0)) / 1000;
          const share = allowed / imp;
          console.log(
            `  ${side}: quota: 1,000-people requests allow ${allowed} s; import ${imp.toFixed(2)} s (process ${(cli / 1000).toFixed(2)} s): ${share.toFixed(3)} (process ${(allowed / (cli / 1000)).toFixed(3)})  goal ≥ 0.85: ${share >= 0.85 ? "met" : "NOT met"}; 429s ${runs[side].map((r) => r.tooMany).join(", ")}, requests ${runs[side].map((r) => r.answered).join(", ")}${NAIVE ? `; naive 429s ${runs.naive.map((r) => r.tooMany).join(", ")}` : ""}`,
          );
        }
        const rss = Math.max(...runs[side].map((r) => r.rssMb));
        console.log(
          `  ${side}: peak RSS  ${rss.toFixed(0)} MB (runs ${runs[side].map((r) => r.rssMb.toFixed(0)).join(", ")})  goal ≤ 200 MB: ${rss <= 200 ? "met" : "NOT met"}${NAIVE ? `; naive ${Math.max(...runs.naive.map((r) => r.rssMb)).toFixed(0)} MB` : ""}`,
        );
      }
      await rm(file, { force: true });
    }
    const largest = Math.max(...SIZES);
    if (DRY_RUN) {
      console.log(`\ndry run, no HTTP (bench/import-dry-run-bench.ts ${largest}):`);
      const child = spawn(
        process.execPath,
        ["--import", "tsx", path.join(ROOT, "bench/import-dry-run-bench.ts"), String(largest)],
        { stdio: "inherit" },
      );
      const [code] = await once(child, "exit");
      if (code !== 0) throw new Error(`the dry-run bench exited with ${code}`);
    }
  } finally {
    await emulator.stop();
    await deleteKeysByPrefix(redis, prefix);
    redis.disconnect();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
