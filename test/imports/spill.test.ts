import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SpillReader, SpillWriter } from "../../src/imports/spill.ts";
import { type Scratch, scratch } from "./fixtures.ts";

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

describe("the spill read back asynchronously", () => {
  it("gives back every row in order, across read boundaries, rows longer than a read and tails longer than their room", async () => {
    const file = path.join(s.dir, "rows.spill");
    const writer = await SpillWriter.create(file);
    const written: { row: number; population: string | null; person: string }[] = [];
    for (let i = 0; i < 5000; i++) {
      // Every 997th person is ~200 KB, longer than the 64 KB reads; every 101st is 14–18 KB, so the
      // part of a line a read ends inside is sometimes longer than the room kept for it; multi-byte characters.
      const name =
        i % 997 === 0
          ? "é".repeat(100_000)
          : i % 101 === 0
            ? `Zoë ${i}`.repeat(1400 + (i % 7) * 80)
            : `Zoë ${i}`;
      const row = {
        row: i + 2,
        population: i % 3 === 0 ? null : `population_${i % 3}`,
        person: JSON.stringify({ email: `p${i}@example.net`, firstName: name }),
      };
      written.push(row);
      const wait = writer.append(row.row, row.population, row.person);
      if (wait) await wait;
    }
    const offsets = await writer.close();
    const reader = new SpillReader(file, offsets, writer.populations);
    const read: typeof written = [];
    let nextSeq = 0;
    for await (const chunk of reader.chunks()) {
      expect(chunk.firstSeq).toBe(nextSeq);
      nextSeq += chunk.rows.length;
      chunk.rows.forEach((row, i) => {
        read.push({
          row,
          population: chunk.populations[i] as string | null,
          person: chunk.persons[i] as string,
        });
      });
    }
    expect(read).toEqual(written);
    // Random access by sequence number agrees with the in-order read.
    expect(reader.row(997)).toEqual(written[997]);
    await reader.close();
  });

  it("stops at an abort between reads", async () => {
    const file = path.join(s.dir, "rows.spill");
    const writer = await SpillWriter.create(file);
    for (let i = 0; i < 20_000; i++) {
      const wait = writer.append(i + 2, null, JSON.stringify({ email: `q${i}@example.net` }));
      if (wait) await wait;
    }
    const reader = new SpillReader(file, await writer.close(), writer.populations);
    const abort = new AbortController();
    let chunks = 0;
    await expect(
      (async () => {
        for await (const _chunk of reader.chunks(abort.signal)) {
          if (++chunks === 2) abort.abort(new Error("stop"));
        }
      })(),
    ).rejects.toThrow("stop");
    expect(chunks).toBe(2);
  });
});
