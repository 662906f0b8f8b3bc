/**
 * Exports under a rate limit, end to end: `recruit-sync export --inline`
 * (the bin, its own process, the Redis-shared governor on) against the
 * emulator in another process holding the rate limit, into DuckDB. Goal
 * (issue 11): quota-forced time ÷ the export's wall time ≥ 0.95 in each shape.
 *
 *   npm run bench -- export-rate                      # the three shapes (~8 min)
 *   npm run bench -- export-rate --shape 100/5        # one of them
 *   npx tsx bench/export-rate-bench.ts --shape 300/10 --pages 600 --rounds 1
 *
 * Shapes (pages at quota/window): 1000 at 500/20 s, 200 at 100/5 s, 2000 at
 * 1000/60 s — each exactly two windows' worth, where keeping back one request
 * too many pushes the last pages into a third window.
 *
 * Quota-forced time: floor((requests − 1) / quota) × window, with `requests`
 * the search requests the emulator answered in that run — the windows that
 * must pass before the last request may go, as if pages cost nothing. The
 * export's wall time is the run report's duration (from opening the
 * warehouse to the last commit); the process's wall time, startup included,
 * is printed beside it. The same export without a rate limit (the baseline)
 * alternates with the throttled one, best of each quoted; from its pace the
 * bench derives "ideal": the forced windows plus the last window's pages at
 * the exporter's own unthrottled pace — the best any pacing could do.
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

const { values: args } = parseArgs({
  options: {
    shape: { type: "string", multiple: true },
    pages: { type: "string" },
    rounds: { type: "string", default: "2" },
    "page-size": { type: "string", default: "100" },
  },
});

interface Shape {
  pages: number;
  quota: number;
  windowS: number;
}
const DEFAULT_SHAPES: Shape[] = [
  { pages: 1000, quota: 500, windowS: 20 },
  { pages: 200, quota: 100, windowS: 5 },
  { pages: 2000, quota: 1000, windowS: 60 },
];
const shapes: Shape[] = args.shape
  ? args.shape.map((s) => {
      const m = /^(\d+)\/(\d+(?:\.\d+)?)s?$/.exec(s);
      if (!m) throw new Error(`--shape ${s}: expected QUOTA/WINDOW_SECONDS, e.g. 500/20`);
      const quota = Number(m[1]);
      const known = DEFAULT_SHAPES.find((d) => d.quota === quota && d.windowS === Number(m[2]));
      const pages = args.pages ? Number(args.pages) : (known?.pages ?? quota * 2);
      return { quota, windowS: Number(m[2]), pages };
    })
  : DEFAULT_SHAPES;
for (const s of shapes) {
  if (!(s.pages >= 1 && s.quota >= 1 && s.windowS > 0)) throw new Error(`not a shape: ${JSON.stringify(s)}`);
}
const ROUNDS = Math.max(1, Number(args.rounds));
const PAGE_SIZE = Number(args["page-size"]);
const STUDY = "study_rate";

interface Measured {
  run: CliRun;
  /** The export's own wall time (run report), s. */
  exportS: number;
  requests: number;
  tooMany: number;
}

/** One export through the CLI, into a fresh DuckDB file, with a fresh governor budget in Redis. */
async function exportOnce(emu: EmulatorProcess, redis: Redis, root: string): Promise<Measured> {
  const dir = path.join(root, randomUUID());
  const prefix = `bench-rate-${randomUUID()}`;
  await writeProject(dir, {
    baseUrl: emu.baseUrl,
    prefix,
    job: {
      rate: [
        "kind: export",
        "resources: [participants]",
        `studies: [${STUDY}]`,
        `pageSize: ${PAGE_SIZE}`,
        "",
      ].join("\n"),
    },
  });
  await emu.admin("/requests/reset", {});
  try {
    const run = await runCliExport(dir, ["--job", "rate", "--warehouse", `duckdb:${dir}/w.duckdb`]);
    const counts = await emu.requests("searchParticipants");
    const requests = Object.values(counts).reduce((a, b) => a + b, 0);
    const r = run.report.resources.participants;
    if (r?.status !== "succeeded") throw new Error(`export failed: ${r?.error}`);
    return { run, exportS: run.report.durationMs / 1000, requests, tooMany: counts["429"] ?? 0 };
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

const root = await mkdtemp(path.join(tmpdir(), "export-rate-bench-"));
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
let missed = 0;
try {
  console.log(
    `export-rate: recruit-sync export --inline (participants into DuckDB, page size ${PAGE_SIZE}) ` +
      `against the emulator in its own process; best of ${ROUNDS} alternated rounds`,
  );
  for (const shape of shapes) {
    const emu = await startEmulatorProcess(STUDY, shape.pages * PAGE_SIZE);
    try {
      let best: Measured | undefined;
      let bestBaseline: Measured | undefined;
      for (let round = 0; round < ROUNDS; round++) {
        await emu.admin("/rate-limit", { off: true });
        const baseline = await exportOnce(emu, redis, root);
        if (!bestBaseline || baseline.exportS < bestBaseline.exportS) bestBaseline = baseline;
        // Setting the limit also resets the emulator's windows: each run starts on a fresh one.
        await emu.admin("/rate-limit", { requests: shape.quota, windowSeconds: shape.windowS });
        const run = await exportOnce(emu, redis, root);
        if (!best || run.exportS < best.exportS) best = run;
        console.log(
          `  ${shape.pages} pages at ${shape.quota}/${shape.windowS}s round ${round + 1}: ` +
            `throttled ${run.exportS.toFixed(2)} s (process ${run.run.wallS.toFixed(2)} s, ${run.tooMany} × 429), ` +
            `unthrottled ${baseline.exportS.toFixed(2)} s (process ${baseline.run.wallS.toFixed(2)} s)`,
        );
      }
      if (!best || !bestBaseline) throw new Error("no rounds ran");
      const forced = Math.floor((best.requests - 1) / shape.quota) * shape.windowS;
      const pace = bestBaseline.exportS / bestBaseline.requests;
      const ideal = idealSeconds(best.requests, shape.quota, shape.windowS, pace);
      const ratio = forced / best.exportS;
      const startup = best.run.wallS - best.exportS;
      if (ratio < 0.95) missed++;
      console.log(
        `${shape.pages} pages at ${shape.quota}/${shape.windowS}s: export ${best.exportS.toFixed(2)} s, ` +
          `quota-forced ${forced} s; ${best.requests} requests, ${best.tooMany} × 429; ` +
          `process ${best.run.wallS.toFixed(2)} s (start and stop ${startup.toFixed(2)} s), peak RSS ${best.run.peakRssMb.toFixed(0)} MB`,
      );
      console.log(
        `  unthrottled: ${bestBaseline.exportS.toFixed(2)} s (${(pace * 1000).toFixed(2)} ms/page) → ` +
          `ideal under the quota at that pace ${ideal.toFixed(2)} s; over ideal ${(best.exportS - ideal).toFixed(2)} s`,
      );
      console.log(
        `  quota-forced ÷ export wall ${ratio.toFixed(3)} ${ratio >= 0.95 ? "(goal ≥ 0.95: met)" : "(goal ≥ 0.95: MISSED)"}` +
          `   ideal ÷ export wall ${(ideal / best.exportS).toFixed(3)}` +
          `   quota-forced ÷ process wall ${(forced / best.run.wallS).toFixed(3)}`,
      );
    } finally {
      await emu.stop();
    }
  }
  console.log(
    missed === 0
      ? "export-rate: every shape within 5% of the quota-forced time"
      : `export-rate: ${missed} of ${shapes.length} shapes short of 0.95 (see "ideal ÷ export wall" for the pacing's share)`,
  );
} finally {
  redis.disconnect();
  await rm(root, { recursive: true, force: true });
}
