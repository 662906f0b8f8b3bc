/**
 * What the sync log costs an import: the real `recruit-sync import --inline`
 * of a HubSpot-shaped file into the emulator (its own process), with the log
 * (sync_runs + a sync_log row per person into the project's DuckDB
 * warehouse) and without it (`syncLog.enabled: false`), sides alternating,
 * the emulator's store reset and a fresh Redis prefix before each run.
 * Prints the medians of the wall time and the ratio with ÷ without (goal ≤ 1.15,
 * issue 32).
 *
 *   npm run bench -- sync-log                 # 300k rows, 3 rounds
 *   npx tsx bench/sync-log-bench.ts 100000 --rounds 1
 *   npx tsx bench/sync-log-bench.ts 300000 --rounds 1 --cpu-prof /tmp/prof   # the CLI's profiles, a folder a side
 *
 * Needs Redis on REDIS_URL; keys go under prefixes of their own and are deleted at the end.
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { ImportReport } from "../src/imports/index.ts";
import { deleteKeysByPrefix } from "../src/runtime/delete-keys.ts";
import {
  cleanEnv,
  hubspotImportCommand,
  REDIS_URL,
  runMeasured,
  startEmulatorProcess,
  TOKEN,
  writeProject,
} from "./helpers/cli-run.ts";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt === -1 ? 3 : Number(args[roundsAt + 1]);
const ROWS = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== "--rounds") ?? 300_000);
const profAt = args.indexOf("--cpu-prof");
const PROF_DIR = profAt === -1 ? undefined : path.resolve(args[profAt + 1] ?? "cpu-profiles");
const STUDY = "study_1";

async function generate(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  out.write('"Record ID","First Name","Last Name","Email","Phone Number"\n');
  let buf = "";
  for (let i = 0; i < rows; i++) {
    buf += `"${51_000 + i}","Ann","Lee","person${i}@example.org","(415) 555-${String(i % 10_000).padStart(4, "0")}"\n`;
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await once(out, "drain");
      buf = "";
    }
  }
  out.end(buf);
  await once(out, "finish");
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const dir = await mkdtemp(path.join(tmpdir(), "sync-log-bench-"));
const emu = await startEmulatorProcess(STUDY, 0);
const redis = new Redis(REDIS_URL);
const prefixes: string[] = [];
try {
  const file = path.join(dir, "contacts.csv");
  await generate(file, ROWS);
  const times: Record<"with" | "without", number[]> = { with: [], without: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (["with", "without"] as const) : (["without", "with"] as const)) {
      const project = path.join(dir, `${side}-${round}`);
      const prefix = `bench-synclog-${randomUUID()}`;
      prefixes.push(prefix);
      await writeProject(project, {
        baseUrl: emu.baseUrl,
        prefix,
        job: {},
        config: side === "without" ? ["syncLog:", "  enabled: false"] : ["syncLog:", "  enabled: true"],
      });
      await emu.admin("/reset", {});
      const report = path.join(project, "report.json");
      // runMeasured starts node itself: the command without its first word.
      const cpuProfDir = PROF_DIR ? path.join(PROF_DIR, side) : undefined;
      const cli = hubspotImportCommand(file, { study: STUDY, report, cpuProfDir }).slice(1);
      const m = await runMeasured(
        cli,
        project,
        cleanEnv({ RECRUIT_SYNC_API_TOKEN: TOKEN, RECRUIT_SYNC_CONFIG_DIR: path.join(project, "config") }),
      );
      const parsed = ImportReport.parse(JSON.parse(await readFile(report, "utf8")));
      if (parsed.imported !== ROWS) throw new Error(`${side}: imported ${parsed.imported} of ${ROWS}`);
      times[side].push(m.wallS);
      process.stdout.write(`round ${round + 1} ${side.padEnd(7)} ${m.wallS.toFixed(2)} s\n`);
    }
  }
  const w = median(times.with);
  const wo = median(times.without);
  process.stdout.write(
    `sync log, ${ROWS} rows: ${w.toFixed(2)} s with, ${wo.toFixed(2)} s without (medians of ${ROUNDS}); ratio ${(w / wo).toFixed(3)} (goal ≤ 1.15)\n`,
  );
} finally {
  for (const p of prefixes) await deleteKeysByPrefix(redis, p);
  redis.disconnect();
  await emu.stop();
  await rm(dir, { recursive: true, force: true });
}
