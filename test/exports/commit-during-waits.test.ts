import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { BudgetWaits, type RunReport, runExport } from "../../src/exports/index.ts";
import { createRateGovernor } from "../../src/governor/index.ts";
import { runExportJob } from "../../src/runtime/run-export-job.ts";
import { startTestEmulator } from "../helpers/emulator.ts";
import { cleanupsPerTest } from "../helpers/redis.ts";
import { definition, type SinkKind, settled, testWarehouse, withCommit } from "./export-fixture.ts";

const { cleanups, redisFor } = cleanupsPerTest();

/**
 * 60 participants in pages of 5 at 10 requests per 2 s: the first window
 * answers 10 pages, and the 11th waits ~2 s for the next window. With a
 * checkpoint every 1,000 rows nothing would be committed before the end but
 * for that wait.
 */
const QUOTA = "10/2s";
const PAGES_IN_FIRST_WINDOW = 10;

async function setUp(kind: SinkKind = "duckdb") {
  const emu = await startTestEmulator({ rateLimit: QUOTA, sizes: { participantsPerStudy: 60 } });
  cleanups.push(() => emu.close());
  const { redis, prefix } = await redisFor();
  const governor = createRateGovernor({ redis, token: emu.token, service: emu.baseUrl, prefix });
  const waits = new BudgetWaits();
  const client = createClient({
    baseUrl: emu.baseUrl,
    token: emu.token,
    retry: { maxAttempts: 1 },
    ...governor.clientHooks({ priority: "background", onWait: waits.heard }),
  });
  const warehouse = await testWarehouse(kind);
  cleanups.push(() => warehouse.cleanup());
  const sink = await warehouse.open();
  cleanups.push(() => sink.close());
  return { emu, client, waits, sink };
}

const DEFINITION = definition({ resources: ["participants"], studies: ["study_1"], pageSize: 5 });

describe("an export waiting on the rate budget", () => {
  it.each<SinkKind>(["duckdb", "postgres"])(
    "commits the pages it holds during the wait, and a run stopped after that commit resumes after them (%s)",
    async (kind) => {
      const { emu, client, waits, sink } = await setUp(kind);
      const committedAt: number[] = [];
      const stop = new AbortController();
      const first = await settled(
        runExport({
          definition: DEFINITION,
          client,
          sink,
          checkpointRows: 1000,
          budgetWaits: waits,
          signal: stop.signal,
          onCheckpoint: ({ pages }) => {
            committedAt.push(pages);
            // As a kill right after that commit would: nothing later reaches the warehouse.
            stop.abort(new Error("stopped after the first commit"));
          },
        }),
      );
      expect(first.status).toBe("interrupted");
      expect(committedAt).toEqual([PAGES_IN_FIRST_WINDOW]);
      expect(await sink.readTable("participants")).toHaveLength(PAGES_IN_FIRST_WINDOW * 5);

      const before = (await emu.requests()).byRoute.searchParticipants?.["200"] ?? 0;
      const second: RunReport = await settled(
        runExport({ definition: DEFINITION, client, sink, checkpointRows: 1000, budgetWaits: waits }),
      );
      expect(second.status).toBe("succeeded");
      // The pages after the committed cursor only: 11 and 12.
      expect(((await emu.requests()).byRoute.searchParticipants?.["200"] ?? 0) - before).toBe(2);
      const rows = await sink.readTable("participants");
      expect(rows).toHaveLength(60);
      expect(new Set(rows.map((r) => r.participant_id)).size).toBe(60);
      expect((await emu.requests()).byRoute.searchParticipants?.["429"]).toBeUndefined();
    },
    30_000,
  );

  it("with a commit still in flight when the wait begins, commits once that one is done, still within the wait", async () => {
    const { client, waits, sink } = await setUp();
    // The checkpoint after 8 pages (40 rows) takes 800 ms: the wait after page 10 begins while it runs.
    let upserts = 0;
    const slowFirstCheckpoint = withCommit(sink, async (c) => {
      const rows = c.upsert?.rows.length ?? 0;
      if (rows > 0) rowsPerCommit.push(rows);
      if (rows > 0 && ++upserts === 1) await sleep(800);
      return sink.commit(c);
    });
    const rowsPerCommit: number[] = [];
    const report = await settled(
      runExport({
        definition: DEFINITION,
        client,
        sink: slowFirstCheckpoint,
        checkpointRows: 40,
        budgetWaits: waits,
      }),
    );
    expect(report.status).toBe("succeeded");
    // Pages 1–8 at checkpointRows; 9–10 once that commit is done, the budget still holding page 11; 11–12 at the end.
    expect(rowsPerCommit).toEqual([40, 10, 10]);
    expect(await sink.readTable("participants")).toHaveLength(60);
  }, 30_000);

  it("holds its pages until checkpointRows without the waits wired in", async () => {
    const { client, sink } = await setUp();
    const committedAt: number[] = [];
    const report = await settled(
      runExport({
        definition: DEFINITION,
        client,
        sink,
        checkpointRows: 1000,
        onCheckpoint: ({ pages }) => {
          committedAt.push(pages);
        },
      }),
    );
    expect(report.status).toBe("succeeded");
    expect(committedAt).toEqual([12]);
  }, 30_000);

  it("commits during the wait on every way in: runExportJob wires the service client's waits to the streams", async () => {
    const emu = await startTestEmulator({ rateLimit: QUOTA, sizes: { participantsPerStudy: 60 } });
    cleanups.push(() => emu.close());
    const { prefix } = await redisFor();
    const dir = await mkdtemp(path.join(tmpdir(), "commit-during-waits-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const config = loadConfig({
      overrides: {
        service: { baseUrl: emu.baseUrl, token: emu.token },
        redis: { prefix },
        paths: { dataDir: dir },
      },
    });
    const pagesSeen: number[] = [];
    const { report } = await runExportJob(
      {
        job: "quota-export",
        definition: { kind: "export", resources: ["participants"], studies: ["study_1"], pageSize: 5 },
        warehouse: `duckdb:${path.join(dir, "w.duckdb")}`,
      },
      { config, holder: "test" },
      {
        onProgress: (p) => {
          const pages = p.resources.participants?.pages;
          if (pages !== undefined) pagesSeen.push(pages);
        },
      },
    );
    expect(report.status).toBe("succeeded");
    expect(report.resources.participants?.rows).toBe(60);
    // A checkpoint's progress after the first window's pages: the default checkpoint (5,000 rows) would give none.
    expect(pagesSeen).toContain(PAGES_IN_FIRST_WINDOW);
  }, 30_000);
});
