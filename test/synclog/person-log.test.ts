import { describe, expect, it } from "vitest";
import { personDigest } from "../../src/imports/index.ts";
import type { BatchResult } from "../../src/imports/send-phase.ts";
import { PersonLog } from "../../src/synclog/person-log.ts";

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
      problems: [{ code: "bad_request" as const, path: [], message: "service: Bad Request" }],
    })),
  };
}

const rowsOf = (log: PersonLog) => [...log.rows({ runId: "r", job: "j", studyId: "s", at: new Date(0) })];

describe("PersonLog", () => {
  it("names people by the digest of their identifier as the import matches it, the latest version deciding", () => {
    const log = new PersonLog("email");
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
    log.batch(result([{ rows: [2, 9], person: ada }]));
    const rows = rowsOf(log);
    expect(rows).toHaveLength(2);
    const byDigest = new Map(rows.map((r) => [r.person_digest, r]));
    expect(byDigest.get(personDigest("email", "ada@example.org"))).toMatchObject({
      source_rows: [2, 9],
      outcome: "imported",
      verification: "unchecked",
    });
    expect(byDigest.get(personDigest("email", 'we"ird\\@example.org'))).toMatchObject({
      outcome: "rejected",
      reason: "service: Bad Request",
    });
  });

  it("reads phones and properties too, and leaves out a person without the identifier", () => {
    const phones = new PersonLog("phone");
    phones.batch(
      result([
        { rows: [1], person: JSON.stringify({ phone: "+14155550100" }) },
        { rows: [2], person: "{}" },
      ]),
    );
    expect(rowsOf(phones).map((r) => r.person_digest)).toEqual([personDigest("phone", "+14155550100")]);
    const props = new PersonLog("property:crm_id");
    props.batch(
      result([
        { rows: [1], person: JSON.stringify({ properties: [{ propertyId: "crm_id", value: "C-1" }] }) },
      ]),
    );
    expect(rowsOf(props).map((r) => r.person_digest)).toEqual([personDigest("property:crm_id", "C-1")]);
  });
});
