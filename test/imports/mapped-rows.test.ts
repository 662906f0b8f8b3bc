import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openCsv } from "../../src/imports/index.ts";
import { readMappedRows } from "../../src/imports/mapped-rows.ts";
import { type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

async function allRows(file: string, worker: boolean) {
  const def = simpleDefinition();
  const csv = await openCsv(file, def.source);
  const out: unknown[] = [];
  let planned: unknown;
  let blankRows = 0;
  for await (const chunk of readMappedRows(csv, def, { worker, stamps: true })) {
    planned ??= chunk.planned;
    blankRows += chunk.blankRows;
    out.push(...chunk.rows);
  }
  return { planned, blankRows, rows: out };
}

describe("the source of mapped rows", () => {
  it("gives the same plain rows, header plan and blank rows whichever thread mapped them", async () => {
    const lines = ["Email,Name,Extra"];
    for (let i = 0; i < 3000; i++) {
      if (i % 500 === 7) lines.push(",,");
      lines.push(i % 400 === 3 ? `not-an-email,Bad ${i},x` : `P${i}@Example.org,Person ${i},x`);
    }
    const file = await s.file("people.csv", `${lines.join("\n")}\n`);
    const onMain = await allRows(file, false);
    const onThread = await allRows(file, true);
    expect(onThread).toEqual(onMain);
    expect(onMain.planned).toEqual({ headers: ["Email", "Name", "Extra"], unmapped: ["Extra"], ignored: [] });
    expect(onMain.blankRows).toBe(6);
    const rows = onMain.rows as { valid: boolean; row: number; key?: string; person?: string }[];
    expect(rows).toHaveLength(3000);
    expect(rows.filter((r) => !r.valid)).toHaveLength(8);
    expect(rows[0]).toMatchObject({ valid: true, row: 2, key: "p0@example.org" });
    expect(JSON.parse(rows[0]?.person as string)).toEqual({ email: "p0@example.org", firstName: "Person 0" });
  }, 60_000);
});
