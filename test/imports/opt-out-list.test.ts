import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OptOutJobDefinition } from "../../src/config/import-job.ts";
import { runOptOut } from "../../src/imports/index.ts";
import { type Scratch, scratch } from "./fixtures.ts";

// An opt-out list read as an import reads its file (header row, skipped and
// blank rows), checked in dry runs: the requests it would send, written down.

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

async function dryRunOf(csv: string, definition: Record<string, unknown> = {}) {
  const file = await s.file("list.csv", csv);
  const requestsFile = path.join(s.dir, "requests.ndjson");
  const report = await runOptOut({
    file,
    definition: OptOutJobDefinition.parse({ kind: "opt-out", ...definition }),
    dryRun: true,
    requestsFile,
    rejectsFile: path.join(s.dir, "list.rejects.csv"),
  });
  const lines = (await readFile(requestsFile, "utf8").catch(() => "")).split("\n").filter(Boolean);
  return {
    report,
    requests: lines.map((l) => JSON.parse(l) as { method: string; path: string; body: unknown }),
  };
}

describe("an opt-out list", () => {
  it("skips the rows before the header and the blank ones, and sends each person once", async () => {
    const { report, requests } = await dryRunOf(
      "Exported by the support desk\n\nName,Email\nAnn,ann@x.org\n,\nBob,BOB@x.org\nAnn again,Ann@X.org\n",
      { source: { skipRows: 1 } },
    );
    expect(report).toMatchObject({
      rowsRead: 3,
      blankRows: 2,
      duplicates: 1,
      requests: 2,
      updated: 2,
      rejected: 0,
    });
    expect(requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ["PUT", "/people/ann%40x.org/opted-out", { isOptedOut: true }],
      ["PUT", "/people/BOB%40x.org/opted-out", { isOptedOut: true }],
    ]);
  });

  it("rejects an empty cell and what is neither an email nor a person id, keeping the rows in the rejects file", async () => {
    const { report } = await dryRunOf("Person Id,Name\nperson_1,Ann\n,Bob\nnot an id,Cy\nann@,Di\n");
    expect(report.rejectedByReason).toEqual({
      "empty: no email or person id": 1,
      "not an email or a person id": 1,
      "not a valid email address": 1,
    });
    const rejects = await readFile(path.join(s.dir, "list.rejects.csv"), "utf8");
    expect(rejects.trim().split("\n").slice(1)).toEqual([
      "3,empty: no email or person id,missing_identifier,,Bob",
      "4,not an email or a person id,invalid_identifier,not an id,Cy",
      "5,not a valid email address,invalid_identifier,ann@,Di",
    ]);
    expect(report.requests).toBe(1);
  });

  it("reads a file without a header row from its first column, its first row a person", async () => {
    const { report, requests } = await dryRunOf("ann@x.org,Ann\nperson_2,Bob\n", {
      source: { header: false },
    });
    expect(report.rowsRead).toBe(2);
    expect(requests.map((r) => r.path)).toEqual([
      "/people/ann%40x.org/opted-out",
      "/people/person_2/opted-out",
    ]);
  });

  it("stops at a file of blank rows: it has no header row", async () => {
    await expect(dryRunOf("\n , \n\n", {})).rejects.toMatchObject({ code: "file_empty" });
  });
});
