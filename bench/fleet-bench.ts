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
 *    Sides alternate, and so does the side that goes first (governor, naive;
 *    naive, governor; …), three rounds by default; each run is watched for
 *    three of the emulator's windows, then stopped. The windows are rebuilt
 *    afterwards from the emulator's request journal (bench/helpers/fleet-windows.ts).
 *    Medians of each side are printed with every run's figures.
 * 3. With --change-limit, the same runs while the emulator's limit is halved
 *    in the second window and doubled back in the fifth, --change-at (share
 *    of the window, default 0.5) into each (POST /__emulator/rate-limit), seven
 *    windows watched: each change is "followed within one window" when the
 *    second window opened after it serves ≥ 99% of the new quota and at most
 *    one 429 came after the change.
 *
 * Goals: the governor uses ≥ 99% of the rate (served over the quota of the
 * time that passed) with no 429 across all four processes; with
 * --change-limit, each change followed within one window with at most one 429.
 *
 *   npx tsx bench/fleet-bench.ts [--quota 300] [--window 20] [--windows 3] [--workers 4]
 *     [--page-size 10] [--rounds 3] [--overhead-jobs 5000] [--skip-overhead] [--skip-fleet]
 *     [--change-limit [--change-at 0.5]]
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
import {
  type JournalEntry,
  JournalReply,
  type LimitChange,
  quotaOfTime,
  type RebuiltWindow,
  rebuildWindows,
} from "./helpers/fleet-windows.ts";

const { values: args } = parseArgs({
  options: {
    quota: { type: "string", default: "300" },
    window: { type: "string", default: "20" },
    windows: { type: "string", default: "3" },
    workers: { type: "string", default: "4" },
    "page-size": { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    "overhead-jobs": { type: "string", default: "5000" },
    "skip-overhead": { type: "boolean", default: false },
    "skip-fleet": { type: "boolean", default: false },
    "change-limit": { type: "boolean", default: false },
    "change-at": { type: "string", default: "0.5" },
  },
});
const QUOTA = Number(args.quota);
const WINDOW_MS = Number(args.window) * 1000;
const WINDOWS = Number(args.windows);
const WORKERS = Number(args.workers);
const PAGE_SIZE = Number(args["page-size"]);
const ROUNDS = Number(args.rounds);
const OVERHEAD_JOBS = Number(args["overhead-jobs"]);
const CHANGE_LIMIT = args["change-limit"];
/** How far into its window the limit changes, as a share of the window. */
const CHANGE_AT = Number(args["change-at"]);
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const TOKEN = "bench-token";
/** The emulator's admin API takes its token; the bench makes one for its own emulator. */
const ADMIN_TOKEN = `bench-admin-${randomUUID()}`;
const BIN = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../bin/recruit-sync.mjs");
const POLL_MS = 50;
// More pages than three windows can serve, so neither client ever runs out of work while watched.
const PAGES_PER_STUDY = Math.ceil((1.3 * (Math.max(WINDOWS, CHANGE_LIMIT ? 7 : 0) + 2) * QUOTA) / WORKERS);
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
      "--admin-token",
      ADMIN_TOKEN,
      "--people",
      String(PARTICIPANTS + 500),
      "--participants-per-study",
      String(PARTICIPANTS),
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const origin = `http://127.0.0.1:${port}`;
  const admin = async (p: string, body?: unknown) => {
    const authorization = `Bearer ${ADMIN_TOKEN}`;
    const res = await fetch(`${origin}/__emulator${p}`, {
      method: body === undefined ? "GET" : "POST",
      ...(body === undefined
        ? { headers: { authorization } }
        : { headers: { authorization, "content-type": "application/json" }, body: JSON.stringify(body) }),
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

interface WindowFigures {
  served: number;
  quota: number;
  tooMany: number;
  /** How late this window opened after the previous one ended, or after a limit change cut it (ms; 0 for the first). */
  lagMs: number;
  cut: boolean;
}

interface ChangeFigures {
  quota: number;
  /** The first window opened after the change, and the one after it. */
  first: WindowFigures | undefined;
  second: WindowFigures | undefined;
  /** 429s answered from the change to the end of the second window. */
  tooMany: number;
  /** The second window served ≥ 99% of the new quota, and no more than one 429 since the change. */
  followed: boolean;
}

interface RunFigures {
  windows: WindowFigures[];
  /** Requests served in the watched windows over what they allowed. */
  windowUse: number;
  /** The same over the quota of the time from the first window's start to the last one's end (changes applied). */
  rateUse: number;
  tooMany: number;
  otherStatuses: number;
  changes: ChangeFigures[];
}

interface PlannedChange {
  /** Index of the window in whose middle the limit changes. */
  window: number;
  quota: number;
}

/** Halved in the second window, doubled back in the fifth (--change-at into each): two whole windows follow each change. */
const PLAN: PlannedChange[] = CHANGE_LIMIT
  ? [
      { window: 1, quota: Math.max(1, Math.floor(QUOTA / 2)) },
      { window: 4, quota: QUOTA },
    ]
  : [];
const WATCHED = CHANGE_LIMIT ? Math.max(WINDOWS, 7) : WINDOWS;

async function journalSince(emu: Emulator, since: number): Promise<JournalEntry[]> {
  return JournalReply.parse(await emu.admin(`/requests/journal?since=${since}`)).entries;
}

/**
 * Follows the emulator's windows through its request journal while the
 * clients work, changes the limit as planned, and returns once WATCHED
 * windows have ended; the figures are rebuilt from the whole journal.
 */
async function watchWindows(emu: Emulator): Promise<RunFigures> {
  const entries: JournalEntry[] = [];
  const changes: LimitChange[] = [];
  let since = 0;
  for (;;) {
    await sleep(POLL_MS);
    const fresh = await journalSince(emu, since);
    entries.push(...fresh);
    since = fresh.at(-1)?.seq ?? since;
    const windows = rebuildWindows(entries, QUOTA, WINDOW_MS, changes);
    const planned = PLAN[changes.length];
    const open = windows.at(-1);
    if (
      planned &&
      open &&
      windows.length - 1 === planned.window &&
      Date.now() >= open.start + WINDOW_MS * CHANGE_AT
    ) {
      await emu.admin("/rate-limit", { requests: planned.quota, windowSeconds: WINDOW_MS / 1000 });
      // Taken once the emulator has answered: an answer recorded while the POST was on its way counts
      // in the window before, so the first window after a change is never credited with more than it served.
      changes.push({ at: Date.now(), quota: planned.quota });
      continue;
    }
    const last = windows[WATCHED - 1];
    if (last && Date.now() >= last.end + 2 * POLL_MS) break;
  }
  entries.push(...(await journalSince(emu, since)));
  const windows = rebuildWindows(entries, QUOTA, WINDOW_MS, changes).slice(0, WATCHED);
  const figures: WindowFigures[] = windows.map((w) => ({
    served: w.served,
    quota: w.quota,
    tooMany: w.tooMany,
    lagMs: w.lagMs,
    cut: w.cut,
  }));
  const served = windows.reduce((n, w) => n + w.served, 0);
  const first = windows[0] as RebuiltWindow;
  const last = windows.at(-1) as RebuiltWindow;
  return {
    windows: figures,
    windowUse: served / windows.reduce((n, w) => n + w.quota, 0),
    rateUse: served / quotaOfTime(first.start, last.end, QUOTA, WINDOW_MS, changes),
    tooMany: windows.reduce((n, w) => n + w.tooMany, 0),
    otherStatuses: windows.reduce((n, w) => n + w.other, 0),
    changes: changes.map((c) => {
      const i = windows.findIndex((w) => w.start >= c.at);
      const [a, b] = [figures[i], figures[i + 1]];
      const until = windows[i + 1]?.end ?? Number.POSITIVE_INFINITY;
      const tooMany = entries.filter((e) => e.status === "429" && e.at >= c.at && e.at < until).length;
      return {
        quota: c.quota,
        first: a,
        second: b,
        tooMany,
        followed: b !== undefined && b.served >= 0.99 * c.quota && tooMany <= 1,
      };
    }),
  };
}

async function resetEmulator(emu: Emulator): Promise<void> {
  // Setting the limit again clears every window; the counts and the journal start from zero.
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
        `w${i + 1} ${w.served}/${w.quota}${w.cut ? " (cut)" : ""} 429×${w.tooMany}${i > 0 ? ` +${(w.lagMs / 1000).toFixed(2)}s` : ""}`,
    )
    .join("  ");
  console.log(
    `  round ${round} ${side.padEnd(8)} window use ${pct(f.windowUse)}, ${rateText(f)}, ` +
      `429s ${f.tooMany} | ${per}${f.otherStatuses ? ` | other non-2xx ${f.otherStatuses}` : ""}`,
  );
  for (const c of f.changes) {
    console.log(
      `    limit set to ${c.quota}: first window after it ${c.first?.served ?? "-"}/${c.quota}, ` +
        `the next ${c.second?.served ?? "-"}/${c.quota}; 429s from the change to the end of the next ${c.tooMany} ` +
        `→ ${c.followed ? "followed within one window" : "NOT followed within one window"}`,
    );
  }
}

/** A window a limit change cut short is followed by a fresh one: the time's quota says nothing then. */
function rateText(f: RunFigures): string {
  return f.changes.length ? "rate use not judged (windows cut by the changes)" : `rate use ${pct(f.rateUse)}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

async function benchFleet(dir: string, redis: Redis): Promise<void> {
  console.log(
    `\n## ${WORKERS} clients, one quota of ${QUOTA} requests per ${WINDOW_MS / 1000} s window, ${WATCHED} windows watched per run`,
  );
  if (CHANGE_LIMIT) {
    console.log(
      `  the limit is set to ${PLAN.map((c) => `${c.quota} ${CHANGE_AT * WINDOW_MS} ms into window ${c.window + 1}`).join(", then ")} ` +
        "(POST /__emulator/rate-limit: the emulator ends its window at once; the next request opens one with the new quota)",
    );
  }
  console.log(
    `  work: participants of ${WORKERS} studies, ${PARTICIPANTS.toLocaleString("en")} each, pages of ${PAGE_SIZE} (${PAGES_PER_STUDY} pages per study)`,
  );
  console.log(
    "  windows rebuilt from the emulator's request journal; window use: served / the windows' quota; rate use: served / quota of the elapsed time (late window starts count against it); +Ns: how late a window opened",
  );
  const emu = await startEmulatorProcess();
  const runs: { governor: RunFigures[]; naive: RunFigures[] } = { governor: [], naive: [] };
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // Sides alternate, and which goes first alternates too.
      const order = round % 2 === 1 ? (["governor", "naive"] as const) : (["naive", "governor"] as const);
      for (const side of order) {
        const f = side === "governor" ? await governorRun(emu, dir, redis) : await naiveRun(emu);
        printRun(side, round, f);
        runs[side].push(f);
      }
    }
  } finally {
    await emu.stop();
  }
  console.log(`  medians of ${ROUNDS} rounds:`);
  for (const side of ["governor", "naive"] as const) {
    const fs = runs[side];
    const followed = fs.flatMap((f) => f.changes).filter((c) => c.followed).length;
    const changes = fs.flatMap((f) => f.changes).length;
    console.log(
      `    ${side.padEnd(8)} ${CHANGE_LIMIT ? "" : `rate use ${pct(median(fs.map((f) => f.rateUse)))} (runs ${fs.map((f) => pct(f.rateUse)).join(", ")}), `}` +
        `window use ${pct(median(fs.map((f) => f.windowUse)))}, 429s ${median(fs.map((f) => f.tooMany))} (runs ${fs.map((f) => f.tooMany).join(", ")})` +
        (changes ? `; changes followed within one window: ${followed} of ${changes}` : ""),
    );
  }
  const g = runs.governor;
  const rate = median(g.map((f) => f.rateUse));
  const tooMany = Math.max(...g.map((f) => f.tooMany));
  if (CHANGE_LIMIT) {
    const all = g.flatMap((f) => f.changes);
    const met = all.length > 0 && all.every((c) => c.followed);
    console.log(
      `  goal (each change followed within one window, at most one 429 each): ${met ? "met" : "MISSED"} ` +
        `(${all.filter((c) => c.followed).length} of ${all.length}; 429s after the changes ${all.map((c) => c.tooMany).join(", ")})`,
    );
  } else {
    const met = rate >= 0.99 && tooMany === 0;
    console.log(
      `  goal (governor ≥ 99% of the rate, 0 429s): ${met ? "met" : "MISSED"} ` +
        `(median ${pct(rate)} of the rate; 429s in its runs ${g.map((f) => f.tooMany).join(", ")})`,
    );
  }
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
