/**
 * A run's log loaded part by part while the run goes on (part-loader.ts):
 * each part lands before the run ends, a person's later line in a later part
 * replaces their row, the run's earlier rows go once, and a part the
 * warehouse cannot take now waits for the end — on DuckDB and PostgreSQL.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { personDigest } from "../../src/imports/index.ts";
import type { BatchResult } from "../../src/imports/send-phase.ts";
import { PartLoader } from "../../src/synclog/part-loader.ts";
import { PersonLog } from "../../src/synclog/person-log.ts";
import { prepareRunLog } from "../../src/synclog/write-run-log.ts";
import { holdDuckDbFile } from "../helpers/duckdb-holder.ts";
import { withTestSchema } from "../helpers/postgres.ts";
import { readLog } from "./read-log.ts";
import { importRunRecord } from "./run-record.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "part-loader-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const RUN_ID = "job-run";
const RUN = importRunRecord(RUN_ID, "job", "people.csv");

function answer(importId: string, entries: { rows: number[]; email: string }[]): BatchResult {
  return {
    index: 0,
    people: entries.length,
    resumed: false,
    importIds: [importId],
    imported: entries.length,
    duplicates: 0,
    rejected: [],
    requests: 1,
    countMismatch: false,
    entries: entries.map((e) => ({ rows: e.rows, person: JSON.stringify({ email: e.email }) })),
    refusedEntries: [],
  };
}

async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A loader and its log, parts of two lines, as ImportRunLog wires them. */
function openRun(url: string) {
  const target = { url, lockWaitMs: 10_000 };
  const prepared = prepareRunLog(target).then(
    () => true,
    () => false,
  );
  const loader = new PartLoader(target, {
    runId: RUN_ID,
    constants: { job: "job", studyId: "study_1", identifier: "email" },
    prepared,
    mayRepeat: () => log.mayRepeat,
  });
  const log: PersonLog = new PersonLog("email", path.join(dir, "run.sync-log.csv"), {
    partLines: 2,
    onPart: (part) => loader.add(part),
  });
  return { loader, log, prepared };
}

const digest = (email: string) => personDigest("email", email);

for (const kind of ["duckdb", "postgres"] as const) {
  describe(`parts of a run's log loaded into ${kind} as the run goes`, () => {
    it("land before the run ends, a later line replaces a person's row, and the run's row comes last", async () => {
      const schema = kind === "postgres" ? await withTestSchema() : undefined;
      const url = schema?.url ?? `duckdb:${path.join(dir, "warehouse.duckdb")}`;
      try {
        // A resumed run's id: what an earlier run under it left is replaced, once.
        const { loader: earlier, log: earlierLog } = openRun(url);
        earlierLog.batch(answer("imp_0", [{ rows: [7], email: "gone@example.org" }]));
        earlierLog.close();
        await earlier.finish({ ...RUN, status: "interrupted" }, earlierLog.parts, new Date());

        const { loader, log } = openRun(url);
        log.batch(
          answer("imp_1", [
            { rows: [2], email: "ada@example.org" },
            { rows: [3], email: "bo@example.org" },
          ]),
        );
        const [first] = log.parts;
        await until(() => first !== undefined && !existsSync(first.file));
        const mid = await readLog(url);
        expect(mid.log.map((r) => r.person_digest).sort()).toEqual(
          [digest("ada@example.org"), digest("bo@example.org")].sort(),
        );
        expect(mid.runs.find((r) => r.runId === RUN_ID)?.status).toBe("interrupted");

        // Ada again with a row merged in (a later version), in the next part.
        log.batch(
          answer("imp_2", [
            { rows: [2, 9], email: "ada@example.org" },
            { rows: [4], email: "cy@example.org" },
          ]),
        );
        const second = log.parts[1];
        await until(() => second !== undefined && !existsSync(second.file));
        log.held({ rows: [5], person: JSON.stringify({ email: "di@example.org" }) });
        log.close();
        const logged = await loader.finish(RUN, log.parts, new Date());

        const { log: rows, runs } = await readLog(url);
        expect(logged).toBe(4);
        expect(rows).toHaveLength(4);
        const by = new Map(rows.map((r) => [r.person_digest, r]));
        expect(by.get(digest("ada@example.org"))).toMatchObject({ source_rows: [2, 9], import_id: "imp_2" });
        expect(by.get(digest("di@example.org"))).toMatchObject({ outcome: "unchanged" });
        expect(by.has(digest("gone@example.org"))).toBe(false);
        expect(runs.find((r) => r.runId === RUN_ID)?.status).toBe("succeeded");
        expect(log.files.every((p) => !existsSync(p.file))).toBe(true);
      } finally {
        await schema?.cleanup();
      }
    }, 60_000);
  });
}

describe("a part the DuckDB file cannot take while another process holds it", () => {
  it("waits, without holding up the run, and goes in with the run's end", async () => {
    const file = path.join(dir, "held.duckdb");
    const url = `duckdb:${file}`;
    const { loader, log, prepared } = openRun(url);
    expect(await prepared).toBe(true);
    const holder = await holdDuckDbFile(file);
    let released = false;
    try {
      log.batch(
        answer("imp_1", [
          { rows: [2], email: "ada@example.org" },
          { rows: [3], email: "bo@example.org" },
          { rows: [4], email: "cy@example.org" },
        ]),
      );
      // The part's load was tried and given up at once: its file stays for the end.
      await new Promise((r) => setTimeout(r, 1500));
      expect(existsSync(log.parts[0]?.file ?? "")).toBe(true);
      log.close();
      const ending = loader.finish(RUN, log.parts, new Date());
      await holder.close();
      released = true;
      expect(await ending).toBe(3);
      const { log: rows } = await readLog(url);
      expect(rows).toHaveLength(3);
      expect(log.files.every((p) => !existsSync(p.file))).toBe(true);
    } finally {
      if (!released) await holder.close();
    }
  }, 60_000);
});
