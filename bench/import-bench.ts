/**
 * Imports end to end, as a user runs them: the real `recruit-sync import
 * --inline` through the bin (a child process) into the emulator (its own
 * process, rate limit off), against a naive script (bench/naive-import.mjs:
 * csv-parse objects, four columns, 500-row batches, two requests in flight,
 * no validation) importing the same HubSpot-shaped file into the same
 * emulator. Sides alternate, the emulator's store is reset before each run.
 * Prints the medians, the ratio naive time ÷ CLI time (goal ≥ 0.8) and the
 * CLI process's peak RSS (GNU time's maximum resident set; goal ≤ 200 MB).
 *
 *   npm run bench -- import                 # 300k and 1M rows, 3 rounds
 *   npx tsx bench/import-bench.ts 300000 --rounds 5
 *   npx tsx bench/import-bench.ts 300000 --rounds 1 --cpu-prof /tmp/prof   # the CLI's profiles
 *   npx tsx bench/import-bench.ts 300000 --no-dry-run   # without the second part
 *
 * Then, as a second line, the dry-run figure: bench/import-dry-run-bench.ts
 * (our pipeline up to finished request bodies against bare csv-parse, no HTTP)
 * at the largest size.
 *
 * Needs Redis on REDIS_URL (default redis://127.0.0.1:6379) for the ledger;
 * keys go under a prefix of their own and are deleted at the end.
 * Not part of npm test. Figures are in docs/performance.md.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { deleteKeysByPrefix } from "../src/runtime/delete-keys.ts";
import { startEmulatorProcess, TOKEN } from "./helpers/cli-run.ts";

const ROOT = path.resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt === -1 ? 3 : Number(args[roundsAt + 1]);
const sizes = args.filter((a, i) => /^\d+$/.test(a) && (roundsAt === -1 || i !== roundsAt + 1)).map(Number);
const profAt = args.indexOf("--cpu-prof");
/** Where the CLI's runs write V8 CPU profiles (main thread and parse worker), when asked. */
const PROF_DIR = profAt === -1 ? undefined : path.resolve(args[profAt + 1] ?? "cpu-profiles");
const SIZES = sizes.length > 0 ? sizes : [300_000, 1_000_000];
const DRY_RUN = !args.includes("--no-dry-run");
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
  /** The CLI's report's phases (hash, read = first pass, send = merge, send and late rejects), ms. */
  phases?: { hash: number; read: number; send: number };
  /** Peak resident set of the measured process, MB (GNU time %M). */
  rssMb: number;
  stdout: string;
}

/** Runs a command under /usr/bin/time; wall time from spawn to exit. */
async function timed(command: string[], cwd: string, env: NodeJS.ProcessEnv, dir: string): Promise<Run> {
  const rssFile = path.join(dir, `rss-${randomUUID()}.txt`);
  const started = performance.now();
  const child = spawn("/usr/bin/time", ["-f", "%M", "-o", rssFile, ...command], {
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
  const kb = Number((await readFile(rssFile, "utf8")).trim().split("\n").pop());
  return { ms, rssMb: kb / 1024, stdout };
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
  try {
    await mkdir(path.join(dir, "config"));
    await writeFile(
      path.join(dir, "config/default.yaml"),
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
    const reset = async () => {
      const res = await fetch(`${emulator.origin}/__emulator/reset`, { method: "POST" });
      if (!res.ok) throw new Error(`emulator reset answered ${res.status}`);
    };
    const importedBy = async () => {
      const res = await fetch(`${emulator.origin}/__emulator/requests`);
      const counts = (await res.json()) as { byRoute: Record<string, Record<string, number>> };
      return counts.byRoute.importParticipants ?? {};
    };
    console.log(
      `import end to end: recruit-sync import --inline (bin, child process) vs a naive script, emulator in its own process (rate limit off), ${ROUNDS} alternating rounds, medians`,
    );
    for (const rows of SIZES) {
      const file = path.join(dir, `hubspot-${rows}.csv`);
      await generate(file, rows);
      const mb = (await stat(file)).size / 2 ** 20;
      const sides = {
        cli: () =>
          timed(
            [
              process.execPath,
              ...(PROF_DIR ? ["--cpu-prof", "--cpu-prof-dir", PROF_DIR] : []),
              path.join(ROOT, "bin/recruit-sync.mjs"),
              "import",
              file,
              "--preset",
              "hubspot",
              "--study",
              STUDY,
              "--phone-country",
              "US",
              "--inline",
              "--force",
              "--report",
              path.join(dir, "report.json"),
            ],
            dir,
            env,
            dir,
          ),
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
      };
      const runs: Record<keyof typeof sides, Run[]> = { cli: [], naive: [] };
      for (let r = 0; r < ROUNDS; r++) {
        const order: (keyof typeof sides)[] = r % 2 === 0 ? ["naive", "cli"] : ["cli", "naive"];
        for (const side of order) {
          await reset();
          const run = await sides[side]();
          if (side === "cli") {
            const report = JSON.parse(await readFile(path.join(dir, "report.json"), "utf8")) as {
              phasesMs: { hash: number; read: number; send: number };
            };
            run.phases = report.phasesMs;
          }
          const calls = await importedBy();
          const expected = Math.ceil(rows / 500);
          if (calls["200"] !== expected || Object.keys(calls).length !== 1) {
            throw new Error(
              `${side}: expected ${expected} answered imports, the emulator saw ${JSON.stringify(calls)}`,
            );
          }
          runs[side].push(run);
        }
      }
      const cli = median(runs.cli.map((r) => r.ms));
      const naive = median(runs.naive.map((r) => r.ms));
      const ratio = naive / cli;
      const rss = Math.max(...runs.cli.map((r) => r.rssMb));
      const fmt = (xs: Run[]) =>
        `best ${(Math.min(...xs.map((r) => r.ms)) / 1000).toFixed(2)} s; ${xs.map((r) => (r.ms / 1000).toFixed(2)).join(", ")}`;
      console.log(`\n${rows.toLocaleString("en")} rows (${mb.toFixed(0)} MB):`);
      console.log(
        `  recruit-sync import --inline  ${(cli / 1000).toFixed(2)} s  (${fmt(runs.cli)})  ${Math.round(rows / (cli / 1000)).toLocaleString("en")} rows/s`,
      );
      console.log(
        `  naive script                  ${(naive / 1000).toFixed(2)} s  (${fmt(runs.naive)})  ${Math.round(rows / (naive / 1000)).toLocaleString("en")} rows/s`,
      );
      const phase = (k: "hash" | "read" | "send") =>
        (median(runs.cli.map((r) => r.phases?.[k] ?? 0)) / 1000).toFixed(2);
      console.log(
        `  CLI phases (medians)          hash ${phase("hash")} s, read and validate ${phase("read")} s, merge and send ${phase("send")} s; the rest is process start and exit`,
      );
      console.log(
        `  ratio (naive ÷ cli time)      ${ratio.toFixed(2)}×  goal ≥ 0.8: ${ratio >= 0.8 ? "met" : "NOT met"}`,
      );
      console.log(
        `  peak RSS, CLI process         ${rss.toFixed(0)} MB (runs ${runs.cli.map((r) => r.rssMb.toFixed(0)).join(", ")})  goal ≤ 200 MB: ${rss <= 200 ? "met" : "NOT met"}; naive ${Math.max(...runs.naive.map((r) => r.rssMb)).toFixed(0)} MB`,
      );
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
