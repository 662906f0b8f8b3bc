import { describe, expect, it } from "vitest";
import {
  createProject,
  exportJob,
  faultHarness,
  openTestQueues,
  startWorkerProcess,
  waitUntil,
} from "./helpers.ts";

describe("a job that fails for good", () => {
  const h = faultHarness();

  it("is logged once at error level, its retries at warn with when the next attempt comes, no key twice in a line", async () => {
    h.project = await createProject({
      redisUrl: h.redis.url,
      emulator: h.emu,
      queue: { attempts: 3, backoffMs: 200 },
      // A database that does not exist: every attempt fails the same way, retryably.
      jobs: {
        lost: { ...exportJob(["study_1"]), sink: "postgres://postgres@127.0.0.1:5432/no_such_database_here" },
      },
    });
    const worker = startWorkerProcess(h.project);
    h.workers.push(worker);
    await worker.ready;
    h.tq = openTestQueues(h.project);
    const id = await h.tq.exportJob("lost");
    await waitUntil(
      "the job to fail for good",
      async () => ((await h.tq?.state("exports", id)) === "failed" ? true : undefined),
      {
        timeoutMs: 45_000,
        context: worker.tail,
      },
    );
    await worker.stop();
    const lines = worker
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => ({
        text: l,
        entry: JSON.parse(l) as { level: number; msg: string; jobId?: string; retryInMs?: number },
      }))
      .filter(({ entry }) => entry.jobId === id);
    const final = lines.filter(({ entry }) => entry.msg === "job failed for good");
    expect(final).toHaveLength(1);
    expect(final[0]?.entry.level).toBe(50);
    const retries = lines.filter(({ entry }) => entry.msg === "job failed: it is tried again");
    expect(retries).toHaveLength(2);
    expect(retries.map(({ entry }) => entry.retryInMs)).toEqual([200, 400]);
    // JSON.parse keeps the last of two equal keys without a word: count them in the text.
    for (const { text } of lines) expect(text.match(/"jobId":/g)?.length ?? 0, text).toBeLessThanOrEqual(1);
  }, 60_000);
});
