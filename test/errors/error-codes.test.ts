import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { API_ERROR_CODES } from "../../src/api/index.ts";
import { ERROR_CODES } from "../../src/errors/index.ts";
import { IMPORT_ERROR_CODES } from "../../src/imports/index.ts";

const DOC = path.resolve(import.meta.dirname, "../../docs/errors.md");

/** Every `code` in the first column of docs/errors.md's tables (a cell may list several). */
function documentedCodes(): Set<string> {
  const codes = new Set<string>();
  for (const line of readFileSync(DOC, "utf8").split("\n")) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!first) continue;
    for (const m of first.matchAll(/`([a-z][a-z_]*)`/g)) if (m[1]) codes.add(m[1]);
  }
  return codes;
}

describe("error codes", () => {
  it("documents every code of the registry in docs/errors.md, and no code the registry lacks", () => {
    const documented = documentedCodes();
    expect(ERROR_CODES.filter((c) => !documented.has(c))).toEqual([]);
    expect([...documented].filter((c) => !(ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  it("has each code once, and the service's and the import's codes among them", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const c of [...API_ERROR_CODES, ...IMPORT_ERROR_CODES]) expect(ERROR_CODES).toContain(c);
  });
});
