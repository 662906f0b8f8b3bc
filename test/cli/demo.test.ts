import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { describe, expect, it } from "vitest";
import { runDemo } from "../../src/cli/demo/run-demo.ts";

describe("the demo", () => {
  it("imports every sample into the emulator and exports into a DuckDB file", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "demo-"));
    const lines: string[] = [];
    const demo = await runDemo({
      warehouse: `duckdb:${path.join(dir, "warehouse.duckdb")}`,
      dataDir: dir,
      out: (l) => lines.push(l),
    });
    try {
      expect(demo.imports.map((r) => r.job)).toEqual([
        "hubspot-contacts",
        "salesforce-contacts",
        "mailchimp-audience",
        "opt-out-list",
      ]);
      for (const r of demo.imports) expect(r.rejected).toBeGreaterThan(0); // the samples carry awkward rows on purpose
      expect(demo.exportReport.status).toBe("succeeded");

      // What the import sent is in the emulator's store.
      const res = await fetch(`${demo.emulator.origin}/__emulator/snapshot`);
      const snapshot = (await res.json()) as { participants: { studyId: string }[] };
      const importedPeople = demo.imports.reduce((n, r) => n + ("imported" in r ? r.imported : 0), 0);
      expect(importedPeople).toBeGreaterThan(0);

      // And the export landed in the warehouse, participants of study_1 included.
      const db = await DuckDBInstance.create(path.join(dir, "warehouse.duckdb"));
      const conn = await db.connect();
      const count = async (sql: string) => Number((await conn.runAndReadAll(sql)).getRows()[0]?.[0]);
      const inStudy1 = snapshot.participants.filter((p) => p.studyId === "study_1").length;
      expect(
        await count("select count(*) from participants where study_id = 'study_1' and _deleted_at is null"),
      ).toBe(inStudy1);
      expect(await count("select count(*) from segments")).toBeGreaterThan(0);
      expect(await count("select count(*) from sync_runs")).toBeGreaterThan(0);
      conn.closeSync();
      db.closeSync();

      // Rejects hold personal data: owner-only.
      const rejects = path.join(dir, "imports", "demo-hubspot-contacts.rejects.csv");
      expect(statSync(rejects).mode & 0o777).toBe(0o600);
      expect(readFileSync(rejects, "utf8").split("\n")[0]).toContain("reason");
      expect(lines.join("\n")).not.toMatch(/@example\.(com|org)/);
    } finally {
      await demo.stop();
    }
    // The demo's ledger and budget keys are gone with it.
    if (demo.redis) {
      const { Redis } = await import("ioredis");
      const r = new Redis(demo.redis.url);
      const left = demo.redis.started ? [] : await r.keys("recruit-sync-demo:*");
      r.disconnect();
      expect(left).toEqual([]);
    }
  });
});
