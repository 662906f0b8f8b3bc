/**
 * Exports a 200,000-participant study from the emulator with a rate limit set,
 * the client paced by the Redis-shared rate governor, and compares pages/s
 * with the quota. Goal: within 5% of it — the export takes no longer than the
 * rate limit forces.
 *
 *   npx tsx bench/export-rate-bench.ts [--participants 200000] [--quota 999] [--window 60] [--page-size 100]
 *
 * The defaults make 2000 pages = 2 full windows of 999 + 2, so the limit
 * forces 2 windows (120 s) and pages/s is comparable with quota/window. Long
 * windows keep the whole-second rounding of X-RateLimit-Reset small.
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { createClient, type ResponseContext } from "../src/api/index.ts";
import { validateExportJobDefinition } from "../src/config/export-job.ts";
import { type Snapshot, startEmulator } from "../src/emulator/index.ts";
import { formatRunReport, runExport } from "../src/exports/index.ts";
import { createRateGovernor } from "../src/governor/index.ts";
import { createSink } from "../src/sinks/index.ts";

const { values: args } = parseArgs({
  options: {
    participants: { type: "string", default: "200000" },
    quota: { type: "string", default: "999" },
    window: { type: "string", default: "60" },
    "page-size": { type: "string", default: "100" },
  },
});
const PARTICIPANTS = Number(args.participants);
const QUOTA = Number(args.quota);
const WINDOW_S = Number(args.window);
const PAGE_SIZE = Number(args["page-size"]);
const TOKEN = "bench-token";
const STUDY = "study_big";
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

const dir = await mkdtemp(join(tmpdir(), "export-rate-bench-"));
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
const prefix = `bench-${randomUUID()}`;
try {
  // A study of PARTICIPANTS people, loaded in one snapshot.
  await admin("/studies", { studyId: STUDY, status: "ACTIVE" });
  const snap = (await admin("/snapshot")) as Snapshot;
  const template = snap.people[0];
  if (!template) throw new Error("the seeded emulator has no people");
  const t0 = Date.UTC(2026, 0, 1);
  for (let i = 1; i <= PARTICIPANTS; i++) {
    const personId = `bench_person_${i}`;
    snap.people.push({ ...template, personId, email: `bench.${i}@example.com`, phone: null, properties: [] });
    snap.participants.push({
      participantId: `bench_participant_${i}`,
      personId,
      studyId: STUDY,
      status: "INVITED",
      approvalStatus: "HIDDEN",
      screenerState: "SCREENER_SENT",
      addedToStudyAt: new Date(t0 + i * 1000).toISOString(),
      invitedToStudyAt: new Date(t0 + i * 1000 + 3_600_000).toISOString(),
    });
  }
  await admin("/snapshot", snap, "PUT");
  await admin("/rate-limit", { requests: QUOTA, windowSeconds: WINDOW_S });

  const governor = createRateGovernor({
    redis,
    token: TOKEN,
    service: emulator.baseUrl,
    prefix,
    headroom: 2,
  });
  const hooks = governor.clientHooks();
  let tooMany = 0;
  const client = createClient({
    baseUrl: emulator.baseUrl,
    token: TOKEN,
    beforeRequest: hooks.beforeRequest,
    onResponse: async (ctx: ResponseContext) => {
      if (ctx.status === 429) tooMany++;
      await hooks.onResponse(ctx);
    },
  });
  const parsed = validateExportJobDefinition({
    kind: "export",
    name: "rate-bench",
    resources: ["participants"],
    studies: [STUDY],
    pageSize: PAGE_SIZE,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const sink = await createSink(`duckdb:${join(dir, "warehouse.duckdb")}`);
  const report = await runExport({ definition: parsed.definition, client, sink });
  await sink.close();
  console.log(formatRunReport(report));

  const r = report.resources.participants;
  if (r?.status !== "succeeded") throw new Error(`export failed: ${r?.error}`);
  const seconds = r.durationMs / 1000;
  const pagesPerSecond = r.requests / seconds;
  const quotaPerSecond = QUOTA / WINDOW_S;
  // Requests past the first window each wait for a window to open: the least time the limit allows.
  const forcedSeconds = Math.floor((r.requests - 1) / QUOTA) * WINDOW_S;
  const ratio = pagesPerSecond / quotaPerSecond;
  console.log(
    `${r.rows.toLocaleString("en")} participants, ${r.requests} pages in ${seconds.toFixed(1)} s ` +
      `(the limit forces at least ${forcedSeconds} s); 429 answers: ${tooMany}`,
  );
  console.log(
    `pages/s ${pagesPerSecond.toFixed(2)}   quota ${QUOTA}/${WINDOW_S}s = ${quotaPerSecond.toFixed(2)}/s   ` +
      `ratio ${(ratio * 100).toFixed(1)}% ${Math.abs(1 - ratio) <= 0.05 ? "(goal within 5%: met)" : "(goal within 5%: MISSED)"}`,
  );
} finally {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== "0");
  redis.disconnect();
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
}
