import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OPERATION_IDS } from "../../src/api/index.ts";
import { openApiText } from "../../src/api/openapi.ts";

const committed = readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8");

describe("docs/openapi.json", () => {
  it("is what `npm run openapi` generates from the endpoint table (run it when this fails)", () => {
    expect(committed).toBe(openApiText());
  });

  it("lists exactly the 14 operations of the spec", () => {
    const doc = JSON.parse(committed) as { paths: Record<string, Record<string, { operationId: string }>> };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    expect(ops.sort()).toEqual([...OPERATION_IDS].sort());
    expect(ops).toHaveLength(14);
    expect(doc.paths["/person"]?.post).toMatchObject({ deprecated: true });
  });
});
