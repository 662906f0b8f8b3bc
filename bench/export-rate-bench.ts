/**
 * Exports under a rate limit, end to end: `recruit-sync export --inline`
 * (the bin, its own process, the Redis-shared governor on) against the
 * emulator in another process holding the rate limit, into DuckDB. Goal
 * (issue 18): quota-forced time ÷ the export's wall time ≥ 0.98 in each shape, no 429.
 *
 *   npm run bench -- export-rate                      # issue 18's two shapes, ten windows each (~15 min)
 *   npm run bench -- export-rate --shape 100/5        # one of them
 *   npm run bench -- export-rate --shape 100/5x4      # one job over 4 studies, a quarter of the pages in each
 *   npm run bench -- export-rate --shape 100/5x4 --stream-concurrency 1   # the same, one study after another
 *   npm run bench -- export-rate --shape 100/5x4 --latency 60-120   # answers 60–120 ms late
 *   npm run bench -- export-rate --shape 500/20 --windows 6         # a shorter export: six windows' worth
 *   npx tsx bench/export-rate-bench.ts --shape 300/10 --pages 600 --rounds 1
 *
 * Shapes (quota/window): 100 per 5 s and 500 per 20 s, one study, one
 * cursor. Each export is `--windows` (default 10) windows' worth of pages,
 * quota × windows: the quota forces windows − 1 whole windows, and the last
 * window's pages go one after another at the exporter's own pace whatever the
 * pacing, so the ratio below rises with the export's length — ten windows
 * is a nightly export of 100,000 participants at 100/5 s and of 500,000 at
 * 500/20 s. `--pages` sets the pages outright. `xN` pages N studies at once
 * (one job, pages ÷ N in each); `--stream-concurrency` sets how many
 * (default the config's).
 *
 * Quota-forced time: floor((requests − 1) / quota) × window, with `requests`
 * the search requests the emulator answered in that run — the windows that
 * must pass before the last request may go, as if pages cost nothing. The
 * export's wall time is the run report's duration (from opening the
 * warehouse to the last commit); the process's wall time, startup included,
 * is printed beside it. The same export without a rate limit (the baseline)
 * alternates with the throttled one (which goes first alternates too), three
 * rounds by default, medians quoted; from its pace the bench derives "ideal":
 * the forced windows plus the last window's pages at the exporter's own
 * unthrottled pace — the best any pacing could do.
 *
 * Where a throttled run's time goes, from the emulator's request journal and
 * the run report's start and finish: before the first answer; the windows
 * before the last one (the quota forces (windows − 1) × window); the last
 * window's pages, one after another; after the last answer (the last commit).
 * The goal (issue 18): quota-forced ÷ export wall ≥ 0.98, no 429.
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { deleteKeysByPrefix } from "../src/runtime/delete-keys.ts";
import {
  type CliRun,
  type EmulatorProcess,
  REDIS_URL,
  runCliExport,
  startEmulatorProcess,
  writeProject,
} from "./helpers/cli-run.ts";
import { JournalReply, rebuildWindows } from "./helpers/fleet-windows.ts";

const { values: args } = parseArgs({
  options: {
    shape: { type: "string", multiple: true },
    pages: { type: "string" },
    windows: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    "page-size": { type: "string", default: "100" },
    "stream-concurrency": { type: "string" },
    /** Answers this many ms late (MIN-MAX, each drawn in between), as a service across a network. */
    latency: { type: "string" },
  },
});

interface Shape {
  /** Pages in all, over every study. */
  pages: number;
  quota: number;
  windowS: number;
  /** Studies of the one job, each with pages ÷ studies pages: each its own cursor. */
  studies: number;
}
const WINDOWS = Number(args.windows);
if (!(Number.isInteger(WINDOWS) && WINDOWS >= 1)) throw new Error(`--windows ${args.windows}: not a count`);
const DEFAULT_SHAPES = ["100/5", "500/20"];
const shapes: Shape[] = (args.shape ?? DEFAULT_SHAPES).map((s) => {
  const m = /^(\d+)\/(\d+(?:\.\d+)?)s?(?:x(\d+))?$/.exec(s);
  if (!m) throw new Error(`--shape ${s}: expected QUOTA/WINDOW_SECONDS[xSTUDIES], e.g. 500/20 or 100/5x4`);
  const quota = Number(m[1]);
  const studies = m[3] ? Number(m[3]) : 1;
  const pages = args.pages ? Number(args.pages) : quota * WINDOWS;
  return { quota, windowS: Number(m[2]), pages, studies };
});
for (const s of shapes) {
  if (!(s.pages >= 1 && s.quota >= 1 && s.windowS > 0 && s.studies >= 1 && s.pages % s.studies === 0))
    throw new Error(`not a shape (pages must split evenly over the studies): ${JSON.stringify(s)}`);
}
const LATENCY = args.latency ? args.latency.split("-").map(Number) : undefined;
if (LATENCY && !(LATENCY.length === 2 && LATENCY.every((n) => Number.isFinite(n) && n >= 0)))
  throw new Error(`--latency ${args.latency}: expected MIN-MAX milliseconds, e.g. 60-120`);
const STREAM_CONCURRENCY = args["stream-concurrency"] ? Number(args["stream-concurrency"]) : undefined;
if (STREAM_CONCURRENCY !== undefined && !(Number.isInteger(STREAM_CONCURRENCY) && STREAM_CONCURRENCY >= 1))
  throw new Error(`--stream-concurrency ${args["stream-concurrency"]}: not a count`);
const ROUNDS = Math.max(1, Number(args.rounds));
const PAGE_SIZE = Number(args["page-size"]);
function studiesOf(shape: Shape): string[] {
  return shape.studies === 1
    ? ["study_rate"]
    : Array.from({ length: shape.studies }, (_, i) => `study_rate_${i + 1}`);
}

function shapeText(shape: Shape): string {
  const over = shape.studies === 1 ? "one study" : `${shape.studies} studies`;
  return `${shape.pages} pages (${over}) at ${shape.quota}/${shape.windowS}s`;
}

interface Measured {
  run: CliRun;
  /** The export's own wall time (run report), s. */
  exportS: number;
  requests: number;
  tooMany: number;
  /** Where the time went (s): before the first answer, the windows before the last, the last window's pages, after the last answer. */
  split: { lead: number; earlier: number; last: number; trail: number; windows: number };
}

const GOAL = 0.98;

/** One export through the CLI, into a fresh DuckDB file, with a fresh governor budget in Redis. */
async function exportOnce(
  emu: EmulatorProcess,
  redis: Redis,
  root: string,
  studies: readonly string[],
  shape: Shape | undefined,
): Promise<Measured> {
  const dir = path.join(root, randomUUID());
  const prefix = `bench-rate-${randomUUID()}`;
  await writeProject(dir, {
    baseUrl: emu.baseUrl,
    prefix,
    job: {
      rate: [
        "kind: export",
        "resources: [participants]",
        `studies: [${studies.join(", ")}]`,
        `pageSize: ${PAGE_SIZE}`,
        "",
      ].join("\n"),
    },
    ...(STREAM_CONCURRENCY === undefined
      ? {}
      : { config: ["exports:", `  streamConcurrency: ${STREAM_CONCURRENCY}`] }),
  });
  await emu.admin("/requests/reset", {});
  if (LATENCY) {
    await emu.admin("/faults", {
      route: "searchParticipants",
      latencyMs: { min: LATENCY[0], max: LATENCY[1] },
    });
  }
  try {
    const run = await runCliExport(dir, ["--job", "rate", "--warehouse", `duckdb:${dir}/w.duckdb`]);
    const counts = await emu.requests("searchParticipants");
    const requests = Object.values(counts).reduce((a, b) => a + b, 0);
    const r = run.report.resources.participants;
    if (r?.status !== "succeeded") throw new Error(`export failed: ${r?.error}`);
    const entries = JournalReply.parse(await emu.admin("/requests/journal")).entries.filter(
      (e) => e.route === "searchParticipants",
    );
    const windows = shape ? rebuildWindows(entries, shape.quota, shape.windowS * 1000) : [];
    const first = entries[0]?.at ?? 0;
    const lastAnswer = entries.at(-1)?.at ?? 0;
    const lastStart = windows.at(-1)?.start ?? first;
    const split = {
      lead: (first - Date.parse(run.report.startedAt)) / 1000,
      earlier: (lastStart - first) / 1000,
      last: (lastAnswer - lastStart) / 1000,
      trail: (Date.parse(run.report.finishedAt) - lastAnswer) / 1000,
      windows: windows.length,
    };
    return { run, exportS: run.report.durationMs / 1000, requests, tooMany: counts["429"] ?? 0, split };
  } finally {
    await deleteKeysByPrefix(redis, prefix);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The least time the quota allows at the exporter's own pace: windows opened
 * by the first request (as the emulator's are), pages at `pace` seconds each.
 */
function idealSeconds(requests: number, quota: number, windowS: number, pace: number): number {
  let t = 0;
  let windowStart = 0;
  let used = 0;
  for (let i = 0; i < requests; i++) {
    if (used === quota || t >= windowStart + windowS) {
      t = Math.max(t, windowStart + windowS);
      windowStart = t;
      used = 0;
    }
    used++;
    t += pace;
  }
  return t;
}

/** The run of median export wall time (the lower middle one of an even count). */
function medianRun(runs: Measured[]): Measured {
  const sorted = [...runs].sort((a, b) => a.exportS - b.exportS);
  return sorted[Math.floor((sorted.length - 1) / 2)] as Measured;
}

function splitText(m: Measured): string {
  const { lead, earlier, last, trail, windows } = m.split;
  return (
    `before the first answer ${lead.toFixed(2)} s, ${windows - 1} window(s) before the last ${earlier.toFixed(2)} s, ` +
    `the last window's pages ${last.toFixed(2)} s, after the last answer ${trail.toFixed(2)} s`
  );
}

const root = await mkdtemp(path.join(tmpdir(), "export-rate-bench-"));
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
let missed = 0;
try {
  console.log(
    `export-rate: recruit-sync export --inline (participants into DuckDB, page size ${PAGE_SIZE}) ` +
      `against the emulator in its own process; medians of ${ROUNDS} alternated rounds; ` +
      `exports.streamConcurrency ${STREAM_CONCURRENCY ?? "as configured by default"}` +
      (LATENCY ? `; answers ${LATENCY[0]}–${LATENCY[1]} ms late` : ""),
  );
  for (const shape of shapes) {
    const studies = studiesOf(shape);
    const emu = await startEmulatorProcess(studies, (shape.pages / shape.studies) * PAGE_SIZE);
    try {
      const runs: Measured[] = [];
      const baselines: Measured[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const throttled = async () => {
          // Setting the limit also resets the emulator's windows: each run starts on a fresh one.
          await emu.admin("/rate-limit", { requests: shape.quota, windowSeconds: shape.windowS });
          runs.push(await exportOnce(emu, redis, root, studies, shape));
        };
        const unthrottled = async () => {
          await emu.admin("/rate-limit", { off: true });
          baselines.push(await exportOnce(emu, redis, root, studies, undefined));
        };
        // Which side goes first alternates from round to round.
        for (const side of round % 2 === 0 ? [unthrottled, throttled] : [throttled, unthrottled])
          await side();
        const run = runs.at(-1) as Measured;
        const baseline = baselines.at(-1) as Measured;
        const forcedHere = Math.floor((run.requests - 1) / shape.quota) * shape.windowS;
        console.log(
          `  ${shapeText(shape)} round ${round + 1}: ` +
            `throttled ${run.exportS.toFixed(2)} s (process ${run.run.wallS.toFixed(2)} s, ${run.tooMany} × 429, ` +
            `ratio ${(forcedHere / run.exportS).toFixed(3)}; ${splitText(run)}), ` +
            `unthrottled ${baseline.exportS.toFixed(2)} s (process ${baseline.run.wallS.toFixed(2)} s)`,
        );
      }
      const med = medianRun(runs);
      const medBaseline = medianRun(baselines);
      const forced = Math.floor((med.requests - 1) / shape.quota) * shape.windowS;
      const pace = medBaseline.exportS / medBaseline.requests;
      const ideal = idealSeconds(med.requests, shape.quota, shape.windowS, pace);
      const ratio = forced / med.exportS;
      const startup = med.run.wallS - med.exportS;
      const tooMany = runs.reduce((n, r) => n + r.tooMany, 0);
      if (ratio < GOAL || tooMany > 0) missed++;
      console.log(
        `${shapeText(shape)}, median of ${ROUNDS}: export ${med.exportS.toFixed(2)} s, ` +
          `quota-forced ${forced} s; ${med.requests} requests, 429s in all throttled runs ${tooMany}; ` +
          `process ${med.run.wallS.toFixed(2)} s (start and stop ${startup.toFixed(2)} s), peak RSS ${med.run.peakRssMb.toFixed(0)} MB`,
      );
      console.log(`  where it went: ${splitText(med)}`);
      console.log(
        `  unthrottled median: ${medBaseline.exportS.toFixed(2)} s (${(pace * 1000).toFixed(2)} ms/page) → ` +
          `ideal under the quota at that pace ${ideal.toFixed(2)} s; over ideal ${(med.exportS - ideal).toFixed(2)} s`,
      );
      console.log(
        `  quota-forced ÷ export wall ${ratio.toFixed(3)} ${ratio >= GOAL ? `(goal ≥ ${GOAL}: met)` : `(goal ≥ ${GOAL}: MISSED)`}` +
          `   ideal ÷ export wall ${(ideal / med.exportS).toFixed(3)}` +
          `   quota-forced ÷ process wall ${(forced / med.run.wallS).toFixed(3)}`,
      );
    } finally {
      await emu.stop();
    }
  }
  console.log(
    missed === 0
      ? `export-rate: every shape at ≥ ${GOAL} of the quota-forced speed, no 429`
      : `export-rate: ${missed} of ${shapes.length} shapes short of ${GOAL} or with a 429 (see "where it went" and "ideal ÷ export wall")`,
  );
} finally {
  redis.disconnect();
  await rm(root, { recursive: true, force: true });
}
