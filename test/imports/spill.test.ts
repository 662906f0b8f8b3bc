import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SpillWriter } from "../../src/imports/spill.ts";
import { type Scratch, scratch } from "./fixtures.ts";

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

describe("the spill read back by sequence number", () => {
  it("gives back every row, from the buffer and from the file, rows longer than the buffer and merged rows", async () => {
    const file = path.join(s.dir, "rows.spill");
    const writer = await SpillWriter.create(file);
    const written: { rows: number[]; population: string | null; prev: number; person: string }[] = [];
    for (let i = 0; i < 5000; i++) {
      // Every 997th person is ~1 MB (three bytes a character: longer than the 2 MB buffer's room), every
      // 101st is 14–18 KB; multi-byte characters; every 7th holds merged rows.
      const name =
        i % 997 === 0
          ? "é".repeat(400_000)
          : i % 101 === 0
            ? `Zoë ${i}`.repeat(1400 + (i % 7) * 80)
            : `Zoë ${i}`;
      const row = {
        rows: i % 7 === 0 ? [i + 1, i + 2] : [i + 2],
        population: i % 3 === 0 ? null : `population_${i % 3}`,
        prev: i % 5 === 0 ? -1 : i - 1 - (i % 4),
        person: JSON.stringify({ email: `p${i}@example.net`, firstName: name }),
      };
      written.push(row);
      const wait = writer.append(
        row.rows.length === 1 ? (row.rows[0] as number) : row.rows,
        row.population,
        row.prev,
        row.person,
      );
      if (wait) await wait;
      // Read back at once, while the line may still be in the buffer.
      if (i % 13 === 0) expect(writer.row(i)).toEqual(row);
    }
    for (let i = 0; i < written.length; i++) expect(writer.row(i)).toEqual(written[i]);
    await writer.close();
  });
});
