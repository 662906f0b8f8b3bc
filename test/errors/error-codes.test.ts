import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { API_ERROR_CODES } from "../../src/api/index.ts";
import { ERROR_CODES } from "../../src/errors/index.ts";
import { IMPORT_ERROR_CODES } from "../../src/imports/index.ts";
import { documentedCodes } from "./documented-codes.ts";

const DOC = path.resolve(import.meta.dirname, "../../docs/errors.md");

describe("error codes", () => {
  it("documents every code of the registry in docs/errors.md, and no code the registry lacks", () => {
    // Row-level codes are no errors: they have a section (and a test) of their own.
    const documented = documentedCodes(readFileSync(DOC, "utf8"), { except: "Row-level codes" });
    expect(ERROR_CODES.filter((c) => !documented.has(c))).toEqual([]);
    expect([...documented].filter((c) => !(ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  it("has each code once, and the service's and the import's codes among them", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const c of [...API_ERROR_CODES, ...IMPORT_ERROR_CODES]) expect(ERROR_CODES).toContain(c);
  });
});
