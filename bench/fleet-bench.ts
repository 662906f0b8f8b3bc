/**
 * The fleet against one rate limit (not part of npm test): `npm run bench -- fleet`.
 *
 * 1. BullMQ overhead: no-op jobs added in one batch (addBulk) and run by one
 *    worker, through our queue setup (openQueues, queueConnection, our worker
 *    options) and through bare BullMQ (a Queue and a Worker with BullMQ's
 *    defaults), alternated, best of each.
 * 2. One quota of Q requests per W-second window, served by the emulator in a
 *    process of its own, and two clients doing the same work — paging through
 *    the participants of one study each, four at once:
 *    - the governor: four `recruit-sync worker` processes sharing the token's
 *      budget through Redis, one export job each (its own DuckDB file);
 *    - a naive client: p-limit(4) over the four studies, our API client with
 *      no shared budget, retrying a 429 after its Retry-After.
 *    Sides alternate (governor, naive, governor, naive by default); each run
 *    is watched for three of the emulator's windows, then stopped. Best of each.
 *
 * Goal: the governor uses ≥ 95% of the quota over three windows with ≤ 1 429
 * per window across all four processes.
 *
 *   npx tsx bench/fleet-bench.ts [--quota 300] [--window 20] [--windows 3] [--workers 4]
 *     [--page-size 10] [--rounds 2] [--overhead-jobs 5000] [--skip-overhead] [--skip-fleet]
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); keys go under a
 * `bench-<uuid>` prefix and are removed afterwards.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import pLimit from "p-limit";
import { createClient } from "../src/api/index.ts";
import { loadConfig, type RuntimeConfig } from "../src/config/index.ts";
import {
  enqueueExport,
  openQueues,
  QUEUE_NAMES,
  queueConnection,
  workerOptions,
} from "../src/queue/index.ts";
import { deleteKeysByPrefix } from "../src/runtime/delete-keys.ts";

const { values: args } = parseArgs({
  options: {
    quota: { type: "string", default: "300" },
    window: { type: "string", default: "20" },
    windows: { type: "string", default: "3" },
    workers: { type: "string", default: "4" },
    "page-size": { type: "string", default: "10" },
    rounds: { type: "string", default: "2" },
    "overhead-jobs": { type: "string", default: "5000" },
    "skip-overhead": { type: "boolean", default: false },
    "skip-fleet": { type: "boolean", default: false },
  },
});
const QUOTA = Number(args.quota);
const WINDOW_MS = Number(args.window) * 1000;
const WINDOWS = Number(args.windows);
const WORKERS = Number(args.workers);
const PAGE_SIZE = Number(args["page-size"]);
const ROUNDS = Number(args.rounds);
const OVERHEAD_JOBS = Number(args["overhead-jobs"]);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const TOKEN = "bench-token";
const BIN = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../bin/recruit-sync.mjs");
const POLL_MS = 50;
// More pages than three windows can serve, so neither client ever runs out of work while watched.
const PAGES_PER_STUDY = Math.ceil((1.3 * (WINDOWS + 1) * QUOTA) / WORKERS);
const PARTICIPANTS = PAGES_PER_STUDY * PAGE_SIZE;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

/** A temp project: config/default.yaml (written per run, for its prefix) and jobs/fleet-export.yaml. */
async function writeProject(dir: string, baseUrl: string, prefix: string): Promise<RuntimeConfig> {
  await mkdir(path.join(dir, "config"), { recursive: true });
  await mkdir(path.join(dir, "jobs"), { recursive: true });
  await writeFile(
    path.join(dir, "jobs", "fleet-export.yaml"),
    ["kind: export", "resources: [participants]", "studies: [study_1]", `pageSize: ${PAGE_SIZE}`, ""].join(
      "\n",
    ),
  );
  await writeFile(
    path.join(dir, "config", "default.yaml"),
    [
      "service:",
      `  baseUrl: ${baseUrl}`,
      "  resetUnit: auto",
      "redis:",
      `  url: ${REDIS_URL}`,
      `  prefix: ${prefix}`,
      "warehouse:",
      "  url: duckdb:./data/warehouse.duckdb",
      "paths:",
      "  jobsDir: ./jobs",
      "  dataDir: ./data",
      "log:",
      "  level: info",
      "queue:",
      "  concurrency: { imports: 1, exports: 1 }",
      "  shutdownDeadlineMs: 5000",
      // Waits of a window are ridden out in-process: this measures the governor, not the pause to delayed.
      `  budgetWaitBoundMs: ${Math.max(30_000, 2 * WINDOW_MS)}`,
      "",
    ].join("\n"),
  );
  return loadConfig({ configDir: path.join(dir, "config"), env: { RECRUIT_SYNC_API_TOKEN: TOKEN } });
}

// ---------------------------------------------------------------- BullMQ overhead

async function overheadRun(
  kind: "ours" | "bare",
  dir: string,
  redis: Redis,
  jobs = OVERHEAD_JOBS,
): Promise<number> {
  const prefix = `bench-${randomUUID()}`;
  const config = await writeProject(dir, "http://127.0.0.1:1/api/public/v1", prefix);
  const connection =
    kind === "ours" ? queueConnection(config) : new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  let queue: Queue;
  let closeQueues: () => Promise<void>;
  if (kind === "ours") {
    const queues = openQueues(config, connection);
    queue = queues.exports as unknown as Queue;
    closeQueues = () => queues.close();
  } else {
    queue = new Queue(QUEUE_NAMES.exports, { connection, prefix });
    closeQueues = () => queue.close();
  }
  let done = 0;
  let finished: () => void = () => {};
  const allDone = new Promise<void>((r) => {
    finished = r;
  });
  const noop = async () => {};
  const worker =
    kind === "ours"
      ? new Worker(QUEUE_NAMES.exports, noop, {
          ...workerOptions(config, connection),
          concurrency: config.queue.concurrency.exports,
        })
      : new Worker(QUEUE_NAMES.exports, noop, { connection, prefix, concurrency: 1 });
  worker.on("completed", () => {
    if (++done === jobs) finished();
  });
  await worker.waitUntilReady();
  const t0 = performance.now();
  for (let i = 0; i < jobs; i += 1000) {
    const n = Math.min(1000, jobs - i);
    await queue.addBulk(Array.from({ length: n }, (_, j) => ({ name: "noop", data: { i: i + j } })));
  }
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
  await worker.close();
  await closeQueues();
  connection.disconnect();
  await deleteKeysByPrefix(redis, prefix);
  return jobs / seconds;
}

async function benchOverhead(dir: string, redis: Redis): Promise<{ ours: number; bare: number }> {
  console.log(`\n## BullMQ overhead: ${OVERHEAD_JOBS} no-op jobs (addBulk), one worker, concurrency 1`);
  // JIT and Redis warm-up weigh heavily on the first thousand jobs: one untimed run of each first.
  for (const kind of ["ours", "bare"] as const)
    await overheadRun(kind, dir, redis, Math.min(2000, OVERHEAD_JOBS));
  const best = { ours: 0, bare: 0 };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of ["ours", "bare"] as const) {
      const rate = await overheadRun(kind, dir, redis);
      best[kind] = Math.max(best[kind], rate);
      console.log(`  round ${round} ${kind.padEnd(4)} ${Math.round(rate).toLocaleString("en")} jobs/s`);
    }
  }
  console.log(
    `  best: ours ${Math.round(best.ours).toLocaleString("en")} jobs/s, bare BullMQ ${Math.round(best.bare).toLocaleString("en")} jobs/s ` +
      `(ours at ${pct(best.ours / best.bare)} of bare)`,
  );
  return best;
}

// ---------------------------------------------------------------- the emulator and its windows

interface Emulator {
  origin: string;
  baseUrl: string;
  admin(p: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

async function startEmulatorProcess(): Promise<Emulator> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      BIN,
      "emulator",
      "--port",
      String(port),
      "--rate-limit",
      `${QUOTA}/${WINDOW_MS / 1000}s`,
      "--token",
      TOKEN,
      "--people",
      String(PARTICIPANTS + 500),
      "--participants-per-study",
      String(PARTICIPANTS),
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const origin = `http://127.0.0.1:${port}`;
  const admin = async (p: string, body?: unknown) => {
    const res = await fetch(`${origin}/__emulator${p}`, {
      method: body === undefined ? "GET" : "POST",
      ...(body === undefined
        ? {}
        : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`emulator ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<unknown>;
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error("the emulator exited at start");
    if (await admin("/rate-limit").catch(() => undefined)) break;
    if (i > 600) throw new Error("the emulator did not answer within 60 s");
    await sleep(100);
  }
  return {
    origin,
    baseUrl: `${origin}/api/public/v1`,
    admin,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

interface Counts {
  ok: number;
  tooMany: number;
  other: number;
}

async function counts(emu: Emulator): Promise<Counts> {
  const summary = (await emu.admin("/requests")) as { byStatus: Record<string, number> };
  const c: Counts = { ok: 0, tooMany: 0, other: 0 };
  for (const [status, n] of Object.entries(summary.byStatus)) {
    if (/^2\d\d$/.test(status)) c.ok += n;
    else if (status === "429") c.tooMany += n;
    else c.other += n;
  }
  return c;
}

interface WindowFigures {
  served: number;
  tooMany: number;
  /** How late this window opened after the previous one ended (ms; 0 for the first). */
  lagMs: number;
}

interface RunFigures {
  windows: WindowFigures[];
  /** Requests served in the watched windows over what they allowed. */
  windowUse: number;
  /** The same over the quota the elapsed time allowed, gaps between windows included. */
  rateUse: number;
  tooManyPerWindowMax: number;
  otherStatuses: number;
}

/**
 * Follows the emulator's fixed windows from its request counts: the first
 * request opens a window of W; the first request after it ends opens the
 * next. Polled every 50 ms, so each boundary is known to within that.
 */
async function watchWindows(emu: Emulator): Promise<RunFigures> {
  let prev = { t: performance.now(), c: await counts(emu) };
  for (;;) {
    await sleep(POLL_MS);
    const c = await counts(emu);
    const t = performance.now();
    if (c.ok + c.tooMany + c.other > 0) {
      prev = { t: (prev.t + t) / 2, c: { ok: 0, tooMany: 0, other: 0 } };
      break;
    }
    prev = { t, c };
  }
  const start = prev.t;
  const figures: WindowFigures[] = [];
  let windowStart = start;
  let atStart = prev.c;
  let lagMs = 0;
  let last = prev;
  for (let k = 0; k < WINDOWS; k++) {
    const end = windowStart + WINDOW_MS;
    // The count taken just before the window ends is what the window served.
    await sleep(Math.max(0, end - performance.now() - 5));
    const atEnd = await counts(emu);
    figures.push({ served: atEnd.ok - atStart.ok, tooMany: atEnd.tooMany - atStart.tooMany, lagMs });
    if (k === WINDOWS - 1) {
      last = { t: end, c: atEnd };
      break;
    }
    // The next window opens with the first request after this one ended.
    const before = atEnd.ok + atEnd.tooMany + atEnd.other;
    let tPrev = performance.now();
    for (;;) {
      await sleep(POLL_MS / 5);
      const c = await counts(emu);
      const t = performance.now();
      if (c.ok + c.tooMany + c.other > before) {
        windowStart = (tPrev + t) / 2;
        lagMs = Math.max(0, windowStart - end);
        atStart = atEnd;
        break;
      }
      tPrev = t;
    }
  }
  const served = figures.reduce((n, w) => n + w.served, 0);
  const elapsed = last.t - start;
  return {
    windows: figures,
    windowUse: served / (WINDOWS * QUOTA),
    rateUse: served / ((QUOTA * elapsed) / WINDOW_MS),
    tooManyPerWindowMax: Math.max(...figures.map((w) => w.tooMany)),
    otherStatuses: last.c.other,
  };
}

async function resetEmulator(emu: Emulator): Promise<void> {
  // Setting the limit again clears every window; the counts start from zero.
  await emu.admin("/rate-limit", { requests: QUOTA, windowSeconds: WINDOW_MS / 1000 });
  await emu.admin("/requests/reset", {});
}

// ---------------------------------------------------------------- the two clients

function startWorkerProcess(configDir: string): { child: ChildProcess; ready: Promise<void>; log: string[] } {
  const log: string[] = [];
  const child = spawn(
    process.execPath,
    [BIN, "--config", configDir, "worker", "--no-schedules", "--no-watch"],
    {
      env: { ...process.env, RECRUIT_SYNC_API_TOKEN: TOKEN, NODE_ENV: "", LOG_LEVEL: "info", REDIS_URL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const ready = new Promise<void>((resolve, reject) => {
    let buffer = "";
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        log.push(line);
        if (log.length > 200) log.shift();
        if (line.includes('"worker started"')) resolve();
        nl = buffer.indexOf("\n");
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`a worker exited with ${code}:\n${log.slice(-10).join("\n")}`)),
    );
  });
  return { child, ready, log };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

async function governorRun(emu: Emulator, dir: string, redis: Redis): Promise<RunFigures> {
  const prefix = `bench-${randomUUID()}`;
  const config = await writeProject(dir, emu.baseUrl, prefix);
  const workers = Array.from({ length: WORKERS }, () => startWorkerProcess(path.join(dir, "config")));
  const connection = queueConnection(config);
  const queues = openQueues(config, connection);
  try {
    await Promise.all(workers.map((w) => w.ready));
    await resetEmulator(emu);
    const watching = watchWindows(emu);
    for (let i = 0; i < WORKERS; i++) {
      await enqueueExport(config, queues, {
        job: "fleet-export",
        studies: [`study_${i + 1}`],
        warehouse: `duckdb:${path.join(dir, "data", `warehouse-${i + 1}.duckdb`)}`,
        origin: "cli",
      });
    }
    const figures = await watching;
    const failed = await queues.exports.getFailed();
    if (failed.length) console.log(`  (${failed.length} export jobs failed: ${failed[0]?.failedReason})`);
    return figures;
  } finally {
    await Promise.all(workers.map((w) => stopProcess(w.child)));
    await queues.close().catch(() => {});
    connection.disconnect();
    await deleteKeysByPrefix(redis, prefix);
    await rm(path.join(dir, "data"), { recursive: true, force: true });
  }
}

async function naiveRun(emu: Emulator): Promise<RunFigures> {
  await resetEmulator(emu);
  const stop = new AbortController();
  const limit = pLimit(WORKERS);
  const watching = watchWindows(emu);
  const work = Array.from({ length: WORKERS }, (_, i) =>
    limit(async () => {
      // Our client without the governor's hooks: a 429 is retried after its Retry-After (plus ≤ 250 ms jitter).
      const client = createClient({
        baseUrl: emu.baseUrl,
        token: TOKEN,
        retry: { maxAttempts: 1_000_000, baseDelayMs: 250, maxDelayMs: 30_000, maxRetryAfterMs: 120_000 },
      });
      for await (const _page of client.participantPages(`study_${i + 1}`, {
        pageSize: PAGE_SIZE,
        signal: stop.signal,
      })) {
        // Paging is the work: the rows are dropped.
      }
    }).catch((err: unknown) => {
      if (!stop.signal.aborted) throw err;
    }),
  );
  try {
    return await watching;
  } finally {
    stop.abort();
    await Promise.all(work);
  }
}

function printRun(side: string, round: number, f: RunFigures): void {
  const per = f.windows
    .map(
      (w, i) =>
        `w${i + 1} ${w.served}/${QUOTA} 429×${w.tooMany}${i > 0 ? ` +${(w.lagMs / 1000).toFixed(2)}s` : ""}`,
    )
    .join("  ");
  console.log(
    `  round ${round} ${side.padEnd(8)} window use ${pct(f.windowUse)}, rate use ${pct(f.rateUse)}, ` +
      `429s ${f.windows.reduce((n, w) => n + w.tooMany, 0)} | ${per}${f.otherStatuses ? ` | other non-2xx ${f.otherStatuses}` : ""}`,
  );
}

function better(a: RunFigures | undefined, b: RunFigures): RunFigures {
  if (!a) return b;
  if (b.rateUse !== a.rateUse) return b.rateUse > a.rateUse ? b : a;
  return b.tooManyPerWindowMax < a.tooManyPerWindowMax ? b : a;
}

async function benchFleet(dir: string, redis: Redis): Promise<void> {
  console.log(
    `\n## ${WORKERS} clients, one quota of ${QUOTA} requests per ${WINDOW_MS / 1000} s window, ${WINDOWS} windows watched per run`,
  );
  console.log(
    `  work: participants of ${WORKERS} studies, ${PARTICIPANTS.toLocaleString("en")} each, pages of ${PAGE_SIZE} (${PAGES_PER_STUDY} pages per study)`,
  );
  console.log(
    "  window use: served in the emulator's windows / their quota; rate use: served / quota of the elapsed time (late window starts count against it); +Ns: how late a window opened",
  );
  const emu = await startEmulatorProcess();
  const best: { governor?: RunFigures; naive?: RunFigures } = {};
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const g = await governorRun(emu, dir, redis);
      printRun("governor", round, g);
      best.governor = better(best.governor, g);
      const n = await naiveRun(emu);
      printRun("naive", round, n);
      best.naive = better(best.naive, n);
    }
  } finally {
    await emu.stop();
  }
  console.log("  best of each:");
  for (const [side, f] of Object.entries(best) as [string, RunFigures][]) {
    const total = f.windows.reduce((n, w) => n + w.tooMany, 0);
    console.log(
      `    ${side.padEnd(8)} quota use ${pct(f.windowUse)} of the windows, ${pct(f.rateUse)} of the time; ` +
        `429s ${total} (at most ${f.tooManyPerWindowMax} in a window)`,
    );
  }
  const g = best.governor as RunFigures;
  const met = g.rateUse >= 0.95 && g.tooManyPerWindowMax <= 1;
  console.log(
    `  goal (governor ≥ 95% of the quota, ≤ 1 429 per window): ${met ? "met" : "MISSED"} ` +
      `(${pct(g.rateUse)} of the time, ${g.tooManyPerWindowMax} 429 at most per window)`,
  );
}

const dir = await mkdtemp(path.join(tmpdir(), "fleet-bench-"));
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
try {
  if (!args["skip-overhead"]) await benchOverhead(dir, redis);
  if (!args["skip-fleet"]) await benchFleet(dir, redis);
} finally {
  redis.disconnect();
  await rm(dir, { recursive: true, force: true });
}
