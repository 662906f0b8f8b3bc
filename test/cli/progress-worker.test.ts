import { Queue } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ImportProgress } from "../../src/imports/index.ts";
import { JobProgress, progressModel } from "../../src/queue/index.ts";
import { jobProgressRecorder } from "../../src/queue/job-processor.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";

function sending(imported: number): ImportProgress {
  return {
    kind: "import",
    phase: "send",
    bytesRead: 1000,
    bytesTotal: 1000,
    rowsRead: 10_000,
    imported,
    rejected: 0,
    duplicates: 0,
    batches: imported / 500,
    batchesResumed: 0,
    requests: imported / 500,
  };
}

describe("a queued job's progress", () => {
  let redis: TestRedis;
  let queue: Queue;
  beforeAll(async () => {
    redis = await withTestRedis();
    queue = new Queue("imports", { connection: redis.redis, prefix: redis.prefix });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await queue.close();
    await redis.cleanup();
  });

  it("carries the projected finish its worker made, which the model (and so --wait and the console) shows", async () => {
    const job = await queue.add("import", { file: "x.csv" });
    const recorder = jobProgressRecorder(job);
    const t0 = Date.parse("2026-11-23T10:00:00Z");
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(t0);
    recorder.onProgress(sending(0), 0);
    // 2,000 rows in 20 s: the 8,000 left take 80 s more.
    vi.setSystemTime(t0 + 20_000);
    recorder.onProgress(sending(2_000), 0);
    await recorder.record(undefined);
    const stored = JobProgress.parse((await queue.getJob(job.id as string))?.progress);
    const finish = new Date(t0 + 100_000).toISOString();
    expect(stored).toMatchObject({ kind: "import", imported: 2_000, projectedFinish: finish });
    const m = progressModel({ state: "active", progress: stored, now: t0 + 20_000 });
    expect(m).toMatchObject({ state: "running", percent: 20, projectedFinish: finish });
  });
});
