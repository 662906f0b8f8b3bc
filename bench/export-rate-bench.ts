/**
 * Exports a study from the emulator under a rate limit, paced by the
 * Redis-shared rate governor, and compares the wall time with the time the
 * quota forces. Goal (issue 11): quota-forced ÷ wall ≥ 0.95 in each shape —
 * round quotas and short windows as well as long ones.
 *
 *   npx tsx bench/export-rate-bench.ts                  # the three shapes
 *   npx tsx bench/export-rate-bench.ts --shape 100/5    # one of them
 *   npx tsx bench/export-rate-bench.ts --shape 300/10 --pages 600 --rounds 1
 *   npx tsx bench/export-rate-bench.ts --client-only    # page through without a sink
 *
 * Shapes (pages at quota/window): 1000 at 500/20 s, 200 at 100/5 s, 2000 at
 * 1000/60 s — each exactly two windows' worth, the case where one request
 * kept back too many pushes the last pages into a third window.
 *
 * Quota-forced time: floor((requests - 1) / quota) × window — the windows
 * that must pass before the last request may go, as if pages cost nothing.
 * Pages do cost something, and that is the exporter's own speed, not the
 * governor's: so the same export runs unthrottled in the same process (the
 * baseline, alternated with the throttled run, best of each quoted), and the
 * bench also prints "ideal": the quota-forced windows plus the unthrottled
 * pace for the pages no window holds back. ideal ÷ wall is what the governor
 * alone loses.
 *
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { createClient, type OperationId, type ResponseContext } from "../src/api/index.ts";
import { validateExportJobDefinition } from "../src/config/export-job.ts";
import { type Snapshot, startEmulator } from "../src/emulator/index.ts";
import { runExport } from "../src/exports/index.ts";
import { createRateGovernor } from "../src/governor/index.ts";
import { createSink } from "../src/sinks/index.ts";

const { values: args } = parseArgs({
  options: {
    shape: { type: "string", multiple: true },
    pages: { type: "string" },
    rounds: { type: "string", default: "2" },
    "page-size": { type: "string", default: "100" },
    "client-only": { type: "boolean", default: false },
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
      return { quota, windowS: Number(m[2]), pages: args.pages ? Number(args.pages) : quota * 2 };
    })
  : DEFAULT_SHAPES;
for (const s of shapes) {
  if (!(s.pages >= 1 && s.quota >= 1 && s.windowS > 0)) throw new Error(`not a shape: ${JSON.stringify(s)}`);
}
const ROUNDS = Math.max(1, Number(args.rounds));
const PAGE_SIZE = Number(args["page-size"]);
const CLIENT_ONLY = args["client-only"];
const TOKEN = "bench-token";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

const emulator = await startEmulator({
  port: 0,
  admin: true,
  rateLimit: false,
  tokens: [TOKEN],
  sizes: { people: 50, participantsPerStudy: 5 },
});
const admin = async (path: string, body?: unknown, method = body === undefined ? "GET" : "POST") => {
  const res = await fetch(`${emulator.origin}/__emulator${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<unknown>;
};

/** A study of `participants` people, loaded in one snapshot. */
async function loadStudy(studyId: string, participants: number): Promise<void> {
  await admin("/studies", { studyId, status: "ACTIVE" });
  const snap = (await admin("/snapshot")) as Snapshot;
  const template = snap.people[0];
  if (!template) throw new Error("the seeded emulator has no people");
  const t0 = Date.UTC(2026, 0, 1);
  for (let i = 1; i <= participants; i++) {
    const personId = `${studyId}_person_${i}`;
    snap.people.push({
      ...template,
      personId,
      email: `${studyId}.${i}@example.com`,
      phone: null,
      properties: [],
    });
    snap.participants.push({
      participantId: `${studyId}_participant_${i}`,
      personId,
      studyId,
      status: "INVITED",
      approvalStatus: "HIDDEN",
      screenerState: "SCREENER_SENT",
      addedToStudyAt: new Date(t0 + i * 1000).toISOString(),
      invitedToStudyAt: new Date(t0 + i * 1000 + 3_600_000).toISOString(),
    });
  }
  await admin("/snapshot", snap, "PUT");
}

interface Run {
  seconds: number;
  requests: number;
  tooMany: number;
  waitedS: number;
  /** Sum over window boundaries of how late the first request of a window went out, s. */
  boundaryDelayS: number;
  windows: number;
  /**
   * Time inside the governor's hooks when they did not wait for the budget, s:
   * Redis round trips, and on a busy event loop whatever ran meanwhile.
   */
  hookOverheadS: number;
  /** From the first request of the last window to the end, s: the exporter's own pace. */
  lastWindowS: number;
}

/** One export (or one paging pass) of the study; the rate limit as the emulator has it now. */
async function runOnce(redis: Redis, studyId: string, dir: string, shape: Shape | undefined): Promise<Run> {
  const prefix = `bench-${randomUUID()}`;
  const governor = createRateGovernor({ redis, token: TOKEN, service: emulator.baseUrl, prefix });
  const hooks = governor.clientHooks();
  let tooMany = 0;
  let requests = 0;
  let hookMs = 0;
  const sentAt = new Map<unknown, number>();
  // The emulator opens a window with the first request after the last one ended: that request's answer says quota − 1.
  const windowStarts: number[] = [];
  const client = createClient({
    baseUrl: emulator.baseUrl,
    token: TOKEN,
    ...(shape
      ? {
          beforeRequest: async (op: OperationId, signal: AbortSignal | undefined) => {
            const t = performance.now();
            const permit = await hooks.beforeRequest(op, signal);
            const now = performance.now();
            hookMs += now - t - permit.waitedMs;
            sentAt.set(permit, now);
            return permit;
          },
          afterRequest: hooks.afterRequest,
        }
      : {}),
    onResponse: async (ctx: ResponseContext) => {
      requests++;
      if (ctx.status === 429) tooMany++;
      if (!shape) return;
      const sent = sentAt.get(ctx.permit);
      sentAt.delete(ctx.permit);
      if (sent !== undefined && ctx.rateLimit?.remaining === shape.quota - 1) windowStarts.push(sent);
      const t = performance.now();
      await hooks.onResponse(ctx);
      hookMs += performance.now() - t;
    },
  });
  try {
    const started = performance.now();
    if (CLIENT_ONLY) {
      for await (const _page of client.participantPages(studyId, { pageSize: PAGE_SIZE })) {
        // Paging alone: what the governor lets through, without a sink's cost.
      }
    } else {
      const parsed = validateExportJobDefinition({
        kind: "export",
        name: "rate-bench",
        resources: ["participants"],
        studies: [studyId],
        pageSize: PAGE_SIZE,
      });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      const sink = await createSink(`duckdb:${join(dir, `${randomUUID()}.duckdb`)}`);
      try {
        const report = await runExport({ definition: parsed.definition, client, sink });
        const r = report.resources.participants;
        if (r?.status !== "succeeded") throw new Error(`export failed: ${r?.error}`);
      } finally {
        await sink.close();
      }
    }
    const ended = performance.now();
    let boundaryDelayMs = 0;
    for (let i = 1; i < windowStarts.length; i++) {
      boundaryDelayMs += windowStarts[i]! - windowStarts[i - 1]! - (shape?.windowS ?? 0) * 1000;
    }
    const lastStart = windowStarts.at(-1) ?? started;
    return {
      seconds: (ended - started) / 1000,
      requests,
      tooMany,
      waitedS: governor.waitedMs / 1000,
      boundaryDelayS: boundaryDelayMs / 1000,
      windows: windowStarts.length,
      hookOverheadS: hookMs / 1000,
      lastWindowS: (ended - lastStart) / 1000,
    };
  } finally {
    await cleanKeys(redis, prefix);
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

async function cleanKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== "0");
}

const dir = await mkdtemp(join(tmpdir(), "export-rate-bench-"));
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
let missed = 0;
try {
  console.log(
    `export-rate: ${CLIENT_ONLY ? "paging only (no sink)" : "participants export into DuckDB"}, ` +
      `page size ${PAGE_SIZE}, best of ${ROUNDS} alternated rounds`,
  );
  for (const [i, shape] of shapes.entries()) {
    const studyId = `study_rate_${i}`;
    await loadStudy(studyId, shape.pages * PAGE_SIZE);
    let best: Run | undefined;
    let bestBaseline: Run | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      await admin("/rate-limit", { off: true });
      const baseline = await runOnce(redis, studyId, dir, undefined);
      if (!bestBaseline || baseline.seconds < bestBaseline.seconds) bestBaseline = baseline;
      // Setting the limit also resets the emulator's windows: each run starts on a fresh one.
      await admin("/rate-limit", { requests: shape.quota, windowSeconds: shape.windowS });
      const run = await runOnce(redis, studyId, dir, shape);
      if (!best || run.seconds < best.seconds) best = run;
      console.log(
        `  ${shape.pages} pages at ${shape.quota}/${shape.windowS}s round ${round + 1}: ` +
          `throttled ${run.seconds.toFixed(2)} s (${run.tooMany} × 429), unthrottled ${baseline.seconds.toFixed(2)} s`,
      );
    }
    if (!best || !bestBaseline) throw new Error("no rounds ran");
    const forced = Math.floor((best.requests - 1) / shape.quota) * shape.windowS;
    const pace = bestBaseline.seconds / bestBaseline.requests;
    const ideal = idealSeconds(best.requests, shape.quota, shape.windowS, pace);
    const ratio = forced / best.seconds;
    // At most what the governor costs: late window starts and the time in its hooks on the request path.
    const governorS = best.boundaryDelayS + best.hookOverheadS;
    if (ratio < 0.95) missed++;
    console.log(
      `${shape.pages} pages at ${shape.quota}/${shape.windowS}s: wall ${best.seconds.toFixed(2)} s, ` +
        `quota-forced ${forced} s; ${best.requests} requests in ${best.windows} windows, ${best.tooMany} × 429`,
    );
    console.log(
      `  where the time over quota-forced went: last window's pages ${best.lastWindowS.toFixed(2)} s ` +
        `(${((best.lastWindowS / Math.max(1, best.requests - Math.floor((best.requests - 1) / shape.quota) * shape.quota)) * 1000).toFixed(1)} ms/page); ` +
        `window starts late by ${(best.boundaryDelayS * 1000).toFixed(0)} ms in all; ` +
        `in the governor's hooks ${(best.hookOverheadS * 1000).toFixed(0)} ms in all (${((best.hookOverheadS / best.requests) * 1000).toFixed(2)} ms/request)`,
    );
    console.log(
      `  baseline, same export unthrottled without governor: ${bestBaseline.seconds.toFixed(2)} s ` +
        `(${(pace * 1000).toFixed(1)} ms/page) → ideal under the quota at that pace ${ideal.toFixed(2)} s`,
    );
    console.log(
      `  quota-forced ÷ wall ${ratio.toFixed(3)} ${ratio >= 0.95 ? "(goal ≥ 0.95: met)" : "(goal ≥ 0.95: MISSED)"}` +
        `   ideal ÷ wall ${(ideal / best.seconds).toFixed(3)}` +
        `   governor's share of the wall ≤ ${((governorS / best.seconds) * 100).toFixed(1)}%`,
    );
  }
  console.log(
    missed === 0
      ? `export-rate: every shape within 5% of the quota-forced time`
      : `export-rate: ${missed} of ${shapes.length} shapes short of 0.95 (see "ideal ÷ wall" for the governor's share)`,
  );
} finally {
  redis.disconnect();
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
}
