import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { type ImportProgress, ImportReport } from "../../src/imports/index.ts";
import { importHarness } from "./fixtures.ts";

const h = importHarness({ rateLimit: "off" });

const definition = ImportJobDefinition.parse({
  kind: "import",
  target: { studyId: "study_4" },
  columns: [
    { column: "Email", to: "email", transforms: ["lowercase"] },
    { column: "Name", to: "firstName" },
    { column: "Phone", to: "phone", transforms: [{ phone: "US" }] },
  ],
  batchSize: 100,
});

const importCalls = () => h.importCalls();

function run(file: string, extra: { onProgress?: (p: ImportProgress) => void; onBatch?: () => void } = {}) {
  return h.run(file, definition, extra);
}

async function failure(p: Promise<unknown>): Promise<RecruitSyncError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RecruitSyncError);
  return err as RecruitSyncError;
}

describe("sending while the file is read", () => {
  it("sends while reading, and a person met again after being sent ends with the merged data of all their rows", async () => {
    const lines = ["Email,Name,Phone", "dup@x.org,Early,(415) 555-0132"];
    for (let i = 1; i <= 4999; i++) lines.push(`p${i}@example.net,Person ${i},`);
    lines.push("DUP@x.org,Late,(415) 555-0199");
    const file = await h.s.file("overlap.csv", `${lines.join("\n")}\n`);

    let last: ImportProgress | undefined;
    let atFirstAnswer: ImportProgress | undefined;
    const report = await run(file, {
      onProgress: (p) => {
        last = p;
      },
      onBatch: () => {
        atFirstAnswer ??= last;
      },
    });

    // The first answer came while the file was still being read.
    expect(atFirstAnswer?.phase).toBe("read");
    expect(atFirstAnswer?.rowsRead).toBeLessThan(5001);
    // Row 2's person went out in the first batch, before row 5002 was read; then again, merged:
    // 5,001 entries of 100 people instead of 5,000.
    expect(report).toMatchObject({ rowsRead: 5001, imported: 5000, duplicates: 1, rejected: 0, batches: 51 });
    expect(report.imported + report.rejected + report.duplicates + report.unchanged).toBe(report.rowsRead);
    expect(report.warnings).toEqual([]);
    const people = (await h.emu.snapshot()).people;
    const dup = people.filter((p) => p.email === "dup@x.org");
    expect(dup).toHaveLength(1);
    expect(dup[0]).toMatchObject({ firstName: "Late", phone: "+14155550199" });
    expect(dup[0]?.additionalPhones).toContain("+14155550132");
    expect(people.filter((p) => /^p\d+@example\.net$/.test(p.email ?? ""))).toHaveLength(4999);
  }, 60_000);

  it("sends nothing from a file whose first rows are mostly rejected", async () => {
    const lines = ["Email,Name,Phone"];
    for (let i = 1; i <= 2000; i++)
      lines.push(`${i % 5 < 3 ? `not-an-email-${i}` : `ok${i}@example.net`},N ${i},`);
    const file = await h.s.file("wrong.csv", `${lines.join("\n")}\n`);

    const err = await failure(run(file));
    expect(err.code).toBe("import_mostly_rejected");
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/of the first \d+ rows were rejected/);
    expect(err.message).not.toContain("not-an-email");
    expect(await importCalls()).toBe(0);
    const report = ImportReport.parse(err.report);
    expect(report.imported).toBe(0);
    expect(report.rejected).toBeGreaterThan(report.rowsRead / 2);
    // The rows that decided it are in the rejects file, header and all.
    const rejects = (await readFile(path.join(h.s.dir, "rejects.csv"), "utf8")).trim().split("\n");
    expect(rejects.length).toBe(report.rejected + 1);
  }, 60_000);

  it("reports what was sent when the read fails after sending began, and the rerun resumes from the ledger", async () => {
    const lines = ["Email,Name,Phone"];
    for (let i = 1; i <= 3000; i++) lines.push(`r${i}@example.net,Person ${i},`);
    lines.push('"broken@example.net,Unclosed');
    const file = await h.s.file("broken.csv", `${lines.join("\n")}\n`);

    const first = await failure(run(file));
    expect(first.code).toBe("file_unclosed_quote");
    const sent = ImportReport.parse(first.report);
    expect(sent.imported).toBeGreaterThan(0);
    const calls = await importCalls();
    expect(sent.requests).toBe(calls);
    const inService = (await h.emu.snapshot()).people.filter((p) =>
      /^r\d+@example\.net$/.test(p.email ?? ""),
    );
    expect(inService).toHaveLength(sent.imported);

    // The same file again: every batch the first run had answered is resumed, none sent twice. The
    // rerun may send batches the first had not reached before the broken line stopped it (it reads
    // on while the resumed batches need no request): those are new people, each sent once.
    const second = await failure(run(file));
    expect(second.code).toBe("file_unclosed_quote");
    const resumed = ImportReport.parse(second.report);
    expect(resumed.batchesResumed).toBe(sent.batches);
    expect(resumed.imported).toBeGreaterThanOrEqual(sent.imported);
    const snapshot = await h.emu.snapshot();
    const peopleSent = snapshot.imports.reduce((n, i) => n + i.count, 0);
    const inServiceAfter = snapshot.people.filter((p) => /^r\d+@example\.net$/.test(p.email ?? ""));
    expect(inServiceAfter).toHaveLength(resumed.imported);
    expect(peopleSent).toBe(resumed.imported);
    expect(await importCalls()).toBe(calls + (resumed.batches - resumed.batchesResumed));
  }, 60_000);
});
