import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import { API_ERROR_CODES } from "../../src/api/index.ts";
import { ROW_PROBLEM_CODES, RowProblem } from "../../src/imports/index.ts";
import { type SCHEMA_CODES, SERVICE_CODES } from "../../src/imports/row-problem.ts";
import { documentedCodes } from "../errors/documented-codes.ts";

const DOC = path.resolve(import.meta.dirname, "../../docs/errors.md");

describe("row-level codes", () => {
  it("documents every row-level code in docs/errors.md's table, and no code the union lacks", () => {
    const documented = documentedCodes(readFileSync(DOC, "utf8"), { only: "Row-level codes" });
    expect(ROW_PROBLEM_CODES.filter((c) => !documented.has(c))).toEqual([]);
    expect([...documented].filter((c) => !(ROW_PROBLEM_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  it("finds a code missing from the table", () => {
    const doc = readFileSync(DOC, "utf8").replace(/^\| `invalid_characters` \|.*\n/m, "");
    expect(documentedCodes(doc, { only: "Row-level codes" }).has("invalid_characters")).toBe(false);
  });

  it("has each code once: zod's issue codes for the person's schema, the service's answers' for its refusals", () => {
    expect(new Set(ROW_PROBLEM_CODES).size).toBe(ROW_PROBLEM_CODES.length);
    expectTypeOf<(typeof SCHEMA_CODES)[number]>().toEqualTypeOf<z.core.$ZodIssueCode>();
    for (const c of SERVICE_CODES) expect(API_ERROR_CODES).toContain(c);
  });

  it("refuses a problem whose code is not in the union", () => {
    expect(
      RowProblem.safeParse({ code: "invalid_date", path: ["lastContactDate"], message: "m", row: 2 }).success,
    ).toBe(true);
    expect(RowProblem.safeParse({ code: "service_rejected", path: [], message: "m" }).success).toBe(false);
  });
});
