import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { personDigest } from "../../src/imports/index.ts";
import type { BatchResult } from "../../src/imports/send-phase.ts";
import { createSink } from "../../src/sinks/create-sink.ts";
import { PersonLog } from "../../src/synclog/person-log.ts";
import { SYNC_LOG_TABLE } from "../../src/synclog/table.ts";
import { writeRunLog } from "../../src/synclog/write-run-log.ts";
import { importRunRecord } from "./run-record.ts";

function result(entries: { rows: number[]; person: string }[], refused: number[] = []): BatchResult {
  return {
    index: 0,
    people: entries.length,
    resumed: false,
    importIds: ["imp_1"],
    imported: entries.length - refused.length,
    duplicates: 0,
    rejected: [],
    requests: 1,
    countMismatch: false,
    entries,
    refusedEntries: refused.map((i) => ({
      entry: entries[i] as { rows: number[]; person: string },
      problems: [{ code: "bad_request" as const, path: [], message: 'service: Bad "Request", twice\nover' }],
    })),
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "person-log-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const RUN = importRunRecord("r", "j", "f.csv");

/** The log's rows as the file warehouse holds them once the run's file is loaded. */
async function loaded(log: PersonLog, identifier = "email"): Promise<Map<string, Record<string, unknown>>> {
  log.close();
  const url = `file:${path.join(dir, `lake-${identifier}`)}`;
  await writeRunLog({ url, lockWaitMs: 0 }, RUN, {
    runId: RUN.runId,
    parts: log.parts,
    constants: { job: "j", studyId: "s", identifier, at: new Date(0) },
    clear: true,
    mayRepeat: log.mayRepeat,
  });
  const sink = await createSink(url);
  try {
    await sink.prepare([SYNC_LOG_TABLE]);
    return new Map((await sink.readTable("sync_log")).map((r) => [String(r.person_digest), r]));
  } finally {
    await sink.close();
  }
}

describe("PersonLog", () => {
  it("names people by the digest of their identifier as the import matches it, the latest version deciding", async () => {
    const log = new PersonLog("email", path.join(dir, "run.sync-log.csv"));
    const ada = JSON.stringify({ firstName: 'A "quoted" name', email: "Ada@Example.ORG" });
    const odd = JSON.stringify({ email: 'we"ird\\@example.org' });
    log.batch(
      result(
        [
          { rows: [2], person: ada },
          { rows: [3], person: odd },
        ],
        [1],
      ),
    );
    // Each person has one line so far: the load need not look for a person's latest.
    expect(log.mayRepeat).toBe(false);
    const populations = new PersonLog("email", path.join(dir, "pop.csv"), { populations: true });
    expect(populations.mayRepeat).toBe(true);
    populations.close();
    log.batch(result([{ rows: [2, 9], person: ada }]));
    expect(log.mayRepeat).toBe(true);
    log.refused(4, [
      { code: "invalid_format", path: ["email"], message: "Email: not an email" },
      { code: "missing_identifier", path: ["email"], message: "Email: no valid value" },
    ]);
    expect(log.lines).toBe(4);
    // The file holds the addresses, as the rejects file does: its owner's alone, and gone once loaded.
    expect((await stat(log.files[0]?.file ?? "")).mode & 0o777).toBe(0o600);

    const rows = await loaded(log);
    expect(JSON.stringify([...rows.values()])).not.toContain("example.org");
    expect(rows.size).toBe(3);
    expect(rows.get(personDigest("email", "ada@example.org"))).toMatchObject({
      source_rows: [2, 9],
      outcome: "imported",
      import_id: "imp_1",
      verification: "unchecked",
      reason: null,
    });
    expect(rows.get(personDigest("email", 'we"ird\\@example.org'))).toMatchObject({
      source_rows: [3],
      outcome: "rejected",
      reason: 'service: Bad "Request", twice over',
      codes: "bad_request",
      verification: null,
    });
    expect(rows.get("row:4")).toMatchObject({
      source_rows: [4],
      outcome: "rejected",
      reason: "Email: not an email; Email: no valid value",
      codes: "invalid_format;missing_identifier",
    });
  });

  it("reads phones and properties too, and leaves out a person without the identifier", async () => {
    const phones = new PersonLog("phone", path.join(dir, "phones.csv"));
    phones.batch(
      result([
        { rows: [1], person: JSON.stringify({ phone: "+14155550100" }) },
        { rows: [2], person: "{}" },
      ]),
    );
    expect(phones.lines).toBe(1);
    const props = new PersonLog("property:crm_id", path.join(dir, "props.csv"));
    props.batch(
      result([
        { rows: [1], person: JSON.stringify({ properties: [{ propertyId: "crm_id", value: "C-1" }] }) },
        { rows: [2], person: JSON.stringify({ properties: [{ propertyId: "crm_id", value: "C,\n2" }] }) },
      ]),
    );
    expect([...(await loaded(phones, "phone")).keys()]).toEqual([personDigest("phone", "+14155550100")]);
    expect([...(await loaded(props, "property:crm_id")).keys()].sort()).toEqual(
      [personDigest("property:crm_id", "C-1"), personDigest("property:crm_id", "C,\n2")].sort(),
    );
  });

  it("logs an opt-out list's people by email or person id, each with its own identifier", async () => {
    const log = new PersonLog("email", path.join(dir, "opt-out.csv"));
    log.listed({ identifier: "email", key: "ann@example.org" }, 2, "opted_out");
    log.listed({ identifier: "personId", key: "p_7" }, 3, "opted_out");
    log.listed({ identifier: "email", key: "gone@example.org" }, 4, {
      problem: { code: "person_not_found", path: [], message: "person not found" },
    });
    const rows = await loaded(log);
    expect(rows.get(personDigest("email", "ann@example.org"))).toMatchObject({
      identifier: "email",
      outcome: "opted_out",
    });
    expect(rows.get(personDigest("personId", "p_7"))).toMatchObject({
      identifier: "personId",
      outcome: "opted_out",
    });
    expect(rows.get(personDigest("email", "gone@example.org"))).toMatchObject({
      outcome: "rejected",
      codes: "person_not_found",
    });
  });

  it("removes the parts an earlier attempt of the run left, and no other run's files", async () => {
    const base = path.join(dir, "job-run1.sync-log");
    // A killed attempt got to part 5; the new attempt under the same id writes fewer parts.
    for (let n = 1; n <= 5; n++) await writeFile(`${base}.${n}.csv`, "s,d\n1,old@example.org\n");
    const others = ["job-run10.sync-log.1.csv", "job-run1.sync-log.csv", "job-run1.rejects.csv"];
    for (const name of others) await writeFile(path.join(dir, name), "kept\n");
    const log = new PersonLog("email", `${base}.csv`, { partLines: 2 });
    log.batch(result([{ rows: [2], person: '{"email":"new@example.org"}' }]));
    log.close();
    expect((await readdir(dir)).sort()).toEqual([...others, "job-run1.sync-log.1.csv"].sort());
    expect(await readFile(`${base}.1.csv`, "utf8")).not.toContain("old@example.org");
  });
});
