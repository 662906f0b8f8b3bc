import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
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
        // DuckDB reports the limit in its own units: 64MB is 61.0 MiB.
        expect(settings.memoryLimit).toBe("61.0 MiB");
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
});
