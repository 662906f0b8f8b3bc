/**
 * Migration 5 of a DuckDB warehouse: sync_log made again without its key's
 * index and with `codes`, the rows a warehouse already held kept.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DuckDbSink } from "../../src/sinks/duckdb/duckdb-sink.ts";
import { DUCKDB_MIGRATIONS } from "../../src/sinks/duckdb/migrations.ts";
import { DUCKDB_SQL } from "../../src/sinks/duckdb/sql.ts";
import { SYNC_LOG_TABLE } from "../../src/synclog/table.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "synclog-migration-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("DuckDB migration 5", () => {
  it("keeps the rows of a warehouse made before it, drops the key's index and adds codes", async () => {
    const file = path.join(dir, "w.duckdb");
    const old = await DuckDBInstance.create(file);
    const conn = await old.connect();
    await conn.run(DUCKDB_SQL.createMigrations);
    for (const m of DUCKDB_MIGRATIONS.filter((m) => m.version <= 4)) {
      await conn.run(m.sql);
      await conn.run(DUCKDB_SQL.recordMigration, [m.version, m.name, new Date().toISOString()]);
    }
    await conn.run(
      `INSERT INTO sync_log (run_id, person_digest, outcome, source_rows, logged_at)
       VALUES ('r1', 'abc', 'imported', '[2,9]', '2026-11-01 00:00:00')`,
    );
    const keys = "SELECT count(*) AS n FROM duckdb_constraints() WHERE table_name = 'sync_log'";
    expect(Number((await conn.runAndReadAll(keys)).getRowObjectsJS()[0]?.n)).toBeGreaterThan(0);
    conn.closeSync();
    old.closeSync();

    const sink = await DuckDbSink.open(file);
    try {
      await sink.prepare([SYNC_LOG_TABLE]);
      expect(await sink.readTable("sync_log")).toMatchObject([
        { run_id: "r1", person_digest: "abc", outcome: "imported", source_rows: [2, 9], codes: null },
      ]);
    } finally {
      await sink.close();
    }
    const after = await DuckDBInstance.create(file);
    const c = await after.connect();
    try {
      expect(Number((await c.runAndReadAll(keys)).getRowObjectsJS()[0]?.n)).toBe(0);
      const versions = (await c.runAndReadAll(DUCKDB_SQL.appliedMigrations))
        .getRowsJS()
        .map((r) => Number(r[0]));
      expect(versions).toContain(5);
    } finally {
      c.closeSync();
      after.closeSync();
    }
  });
});
