import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { type ImportProgress, ImportReport, runImport } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

function csv(rows: number): string {
  const lines = ["Email,Name"];
  for (let i = 0; i < rows; i++) lines.push(i % 50 === 7 ? "not-an-email,Bad" : `p${i}@example.com,P${i}`);
  return `${lines.join("\n")}\n`;
}

describe("runImport as a queue drives it", () => {
  let s: Scratch;
  let emu: TestEmulator;
  beforeAll(async () => {
    s = await scratch();
    emu = await startTestEmulator();
  });
  afterAll(async () => {
    await emu.close();
    await s.cleanup();
  });

  it("reports progress from the first byte: hashing, reading with bytes and rows, then sending", async () => {
    const file = await s.file("progress.csv", csv(3000));
    const seen: ImportProgress[] = [];
    const report = await runImport({
      file,
      definition: simpleDefinition({ batchSize: 500 }),
      client: emu.client,
      rejectsFile: path.join(s.dir, "progress.rejects.csv"),
      onProgress: (p) => seen.push(p),
    });
    expect(seen[0]).toMatchObject({ phase: "hash", bytesRead: 0, rowsRead: 0 });
    const total = seen[0]?.bytesTotal ?? 0;
    expect(total).toBeGreaterThan(0);
    const reading = seen.filter((p) => p.phase === "read");
    expect(reading.length).toBeGreaterThan(2);
    // Bytes and rows only grow while the file is read, and rejects are counted as they are met.
    for (let i = 1; i < reading.length; i++) {
      expect(reading[i]!.bytesRead).toBeGreaterThanOrEqual(reading[i - 1]!.bytesRead);
      expect(reading[i]!.rowsRead).toBeGreaterThanOrEqual(reading[i - 1]!.rowsRead);
    }
    expect(reading.some((p) => p.rejected > 0 && p.rowsRead < 3000)).toBe(true);
    const sending = seen.filter((p) => p.phase === "send");
    expect(sending.at(-1)).toMatchObject({ bytesRead: total, batches: report.batches });
    expect(seen.at(-1)).toMatchObject({
      phase: "done",
      imported: report.imported,
      rejected: report.rejected,
    });
    expect(ImportReport.parse(report)).toEqual(report);
  });

  it("fails with a coded error that carries the report when the service refuses the token", async () => {
    const file = await s.file("refused.csv", csv(20));
    const client = emu.clientFor({ token: "not-a-token" });
    const err = await runImport({
      file,
      definition: simpleDefinition(),
      client,
      rejectsFile: path.join(s.dir, "refused.rejects.csv"),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecruitSyncError);
    const failure = err as RecruitSyncError;
    expect(failure.code).toBe("unauthorized");
    expect(failure.retryable).toBe(false);
    const report = ImportReport.parse(failure.report);
    expect(report.rowsRead).toBe(20);
    expect(report.imported).toBe(0);
  });

  it("ends an aborted run as interrupted and retryable, with the report so far", async () => {
    const file = await s.file("aborted.csv", csv(2000));
    const ac = new AbortController();
    const err = await runImport({
      file,
      definition: simpleDefinition({ batchSize: 100 }),
      client: emu.client,
      rejectsFile: path.join(s.dir, "aborted.rejects.csv"),
      signal: ac.signal,
      onBatch: (b) => {
        if (b.index === 2) ac.abort(new Error("shutting down"));
      },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "interrupted", retryable: true });
    expect(ImportReport.parse((err as RecruitSyncError).report).batches).toBeGreaterThanOrEqual(3);
  });
});
