import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBConnection, DuckDBInstance, DuckDBPendingResult } from "@duckdb/node-api";
import { describe, expect, it, vi } from "vitest";
import { DUCKDB_THREADS, ROW_GROUP_ROWS } from "../../src/sinks/duckdb/duckdb-sink.ts";
import { createSink, DuckDbSink } from "../../src/sinks/index.ts";
import { describeSinkContract, WIDGETS, widget } from "./sink-contract.ts";

async function tempDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "recruit-sync-duckdb-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

describeSinkContract(
  "DuckDB",
  async () => {
    const { dir, cleanup } = await tempDir();
    return { open: () => createSink(`duckdb:${join(dir, "nested", "warehouse.duckdb")}`), cleanup };
  },
  { softDeletes: true },
);

describe("DuckDB sink", () => {
  it("creates the warehouse file readable by its owner only: it holds emails and phones", async () => {
    const { dir, cleanup } = await tempDir();
    const path = join(dir, "private", "w.duckdb");
    try {
      const sink = await DuckDbSink.open(path);
      await sink.close();
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, "private"))).mode & 0o777).toBe(0o700);
    } finally {
      await cleanup();
    }
  });

  it("creates the bookkeeping tables through numbered migrations, once", async () => {
    const { dir, cleanup } = await tempDir();
    const path = join(dir, "w.duckdb");
    try {
      for (let i = 0; i < 2; i++) {
        const sink = await DuckDbSink.open(path);
        await sink.prepare([WIDGETS]);
        await sink.commit({ runId: `r${i}`, upsert: { table: "widgets", rows: [widget(`w${i}`)] } });
        await sink.close();
      }
      const sink = await DuckDbSink.open(path);
      await sink.prepare([WIDGETS]);
      expect((await sink.readTable("widgets")).map((r) => r.widget_id)).toEqual(["w0", "w1"]);
      await sink.close();
    } finally {
      await cleanup();
    }
  });

  it("runs DuckDB with the memory settings the export's peak RSS depends on", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const sink = await DuckDbSink.open(join(dir, "w.duckdb"));
      try {
        const settings = await sink.engineSettings();
        // DuckDB reports the limit in its own units: 32MB is 30.5 MiB.
        expect(settings.memoryLimit).toBe("30.5 MiB");
        expect(settings.threads).toBe(DUCKDB_THREADS);
        expect(settings.checkpointThreshold).toBe("953.6 MiB");
        expect(settings.allocatorFlushThreshold).toBe("0 bytes");
        expect(settings.rowGroupSize).toBe(ROW_GROUP_ROWS);
      } finally {
        await sink.close();
      }
    } finally {
      await cleanup();
    }
  });

  it("writes row groups of ROW_GROUP_ROWS rows into the warehouse file", async () => {
    const { dir, cleanup } = await tempDir();
    const path = join(dir, "w.duckdb");
    try {
      const sink = await DuckDbSink.open(path);
      await sink.prepare([WIDGETS]);
      const rows = Array.from({ length: ROW_GROUP_ROWS + 10 }, (_, i) => widget(`w${i}`));
      await sink.commit({ runId: "r1", upsert: { table: "widgets", rows } });
      await sink.close();
      const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
      const conn = await instance.connect();
      const groups = await conn.runAndReadAll(
        "SELECT row_group_id, sum(count) FROM pragma_storage_info('widgets') WHERE column_name = 'widget_id' AND segment_type = 'VARCHAR' GROUP BY ALL ORDER BY 1",
      );
      expect(groups.getRowsJS()).toEqual([
        [0n, BigInt(ROW_GROUP_ROWS)],
        [1n, 10n],
      ]);
      conn.closeSync();
      instance.closeSync();
    } finally {
      await cleanup();
    }
  });

  it("runs a commit's statements task by task on the calling thread, prepared once per sink", async () => {
    // conn.run would hand each statement to one of libuv's pool threads, each with a glibc
    // arena of its own: the export's peak RSS depends on DuckDB working on this thread.
    const { dir, cleanup } = await tempDir();
    const run = vi.spyOn(DuckDBConnection.prototype, "run");
    const prepare = vi.spyOn(DuckDBConnection.prototype, "prepare");
    const runTask = vi.spyOn(DuckDBPendingResult.prototype, "runTask");
    try {
      const sink = await DuckDbSink.open(join(dir, "w.duckdb"));
      await sink.prepare([WIDGETS]);
      const commitOf = (i: number) =>
        sink.commit({
          runId: "r1",
          upsert: { table: "widgets", rows: [widget(`w${i}`), widget(`x${i}`)] },
          state: { stream: "widgets:all", value: { cursor: `c${i}` } },
          run: {
            runId: "r1",
            resource: "widgets",
            startedAt: new Date(),
            finishedAt: null,
            status: "running",
            pages: i,
            rows: 2 * i,
            requests: i,
            error: null,
          },
        });
      const counts = () => ({
        run: run.mock.calls.length,
        prepare: prepare.mock.calls.length,
        tasks: runTask.mock.calls.length,
      });
      run.mockClear();
      await commitOf(1);
      const first = counts();
      expect(first.run).toBe(0);
      expect(first.prepare).toBeGreaterThan(0);
      expect(first.tasks).toBeGreaterThan(0);
      await commitOf(2);
      const second = counts();
      expect(second.run).toBe(0);
      expect(second.prepare).toBe(first.prepare);
      expect(second.tasks).toBeGreaterThan(first.tasks);
      expect((await sink.readTable("widgets")).map((r) => r.widget_id)).toEqual(["w1", "w2", "x1", "x2"]);
      expect(await sink.readState("widgets:all")).toEqual({ cursor: "c2" });
      await sink.close();
    } finally {
      run.mockRestore();
      prepare.mockRestore();
      runTask.mockRestore();
      await cleanup();
    }
  });
});
