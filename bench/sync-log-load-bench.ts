/**
 * The sync log's end-of-run load alone (src/synclog/duckdb-bulk.ts): a
 * run's log file of N people, as PersonLog writes it, loaded into a fresh
 * DuckDB warehouse the way an import's end does, in this process, round
 * after round. Prints the medians of the load's wall and CPU time (the
 * process's, DuckDB's threads included), of making the warehouse's tables
 * (what a run starts with), and the process's peak RSS. The share of the
 * import this is: sync-log-bench.ts.
 *
 *   npm run bench -- sync-log-load
 *   npx tsx bench/sync-log-load-bench.ts 1000000 --rounds 2
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BatchResult } from "../src/imports/send-phase.ts";
import { PersonLog } from "../src/synclog/person-log.ts";
import { prepareRunLog, writeRunLog } from "../src/synclog/write-run-log.ts";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt === -1 ? 5 : Number(args[roundsAt + 1]);
const PEOPLE = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== "--rounds") ?? 300_000);
const BATCH = 1000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** Wall and CPU (every thread of the process) of `work`, in ms. */
async function timed(work: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await work();
  const c = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

const dir = await mkdtemp(path.join(tmpdir(), "sync-log-load-bench-"));
try {
  // The file an import of PEOPLE new people by email leaves: one accepted line each, batches of 1,000.
  const log = new PersonLog("email", path.join(dir, "run.sync-log.csv"));
  for (let b = 0; b < PEOPLE / BATCH; b++) {
    const entries = Array.from({ length: BATCH }, (_, i) => {
      const k = b * BATCH + i;
      return { person: `{"email":"person${k}@example.org","firstName":"Ann"}`, rows: [k + 2] };
    });
    const result = { entries, refusedEntries: [], importIds: [`imp_${String(b).padStart(8, "0")}`] };
    log.batch(result as unknown as BatchResult);
  }
  log.close();
  const people = { parts: log.parts, mayRepeat: log.mayRepeat };
  const times = { prepare: [] as number[], wall: [] as number[], cpu: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const target = { url: `duckdb:${path.join(dir, `warehouse-${round}.duckdb`)}`, lockWaitMs: 0 };
    times.prepare.push((await timed(() => prepareRunLog(target))).wall);
    const at = new Date();
    const run = {
      runId: `bench-${round}`,
      resource: "import",
      startedAt: at,
      finishedAt: at,
      status: "succeeded",
      pages: 0,
      rows: PEOPLE,
      requests: PEOPLE / BATCH,
      error: null,
      kind: "import",
      job: "bench",
      file: "contacts.csv",
      fileHash: null,
      counts: { imported: PEOPLE },
      failureCode: null,
    } as const;
    const constants = { job: "bench", studyId: "study_1", identifier: "email", at };
    let logged = 0;
    const t = await timed(async () => {
      const load = { runId: run.runId, ...people, constants, clear: true };
      logged = (await writeRunLog(target, run, load, Promise.resolve(true))).logged;
    });
    if (logged !== PEOPLE) throw new Error(`loaded ${logged} of ${PEOPLE}`);
    times.wall.push(t.wall);
    times.cpu.push(t.cpu);
    process.stdout.write(`round ${round + 1}: load ${t.wall.toFixed(0)} ms (CPU ${t.cpu.toFixed(0)} ms)\n`);
  }
  process.stdout.write(
    `sync log load, ${PEOPLE} people: ${median(times.wall).toFixed(0)} ms, CPU ${median(times.cpu).toFixed(0)} ms ` +
      `(medians of ${ROUNDS}); tables made in ${median(times.prepare).toFixed(0)} ms; ` +
      `peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
