import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
});
