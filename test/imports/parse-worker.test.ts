import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openCsv } from "../../src/imports/index.ts";
import { type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

describe("the parse worker", () => {
  let s: Scratch;
  beforeEach(async () => {
    s = await scratch();
  });
  afterEach(async () => {
    await s.cleanup();
  });

  it("waits for the main thread when it is ahead, and goes on when the main thread takes its chunks", async () => {
    const rows = 40_000;
    const lines = Array.from(
      { length: rows },
      (_v, i) => `person${i}@example.org,Name ${i},${"x".repeat(60)}`,
    );
    const file = await s.file("slow-reader.csv", `Email,Name,Note\n${lines.join("\n")}\n`);
    const csv = await openCsv(file, simpleDefinition().source);
    let records = 0;
    let chunks = 0;
    for await (const chunk of csv.records(undefined, { worker: true })) {
      // Slower than the worker at first: it runs out of credit and must wait for the chunks to be taken.
      if (chunks++ < 12) await sleep(25);
      records += chunk.length;
    }
    expect(chunks).toBeGreaterThan(12);
    expect(records).toBe(rows + 1);
  });
});
