import { describe, expect, it } from "vitest";
import { Batcher } from "../../src/imports/batch.ts";

const entry = (seq: number) => ({ rows: [seq + 2], person: `{"email":"p${seq}@x.org"}`, seq });

describe("the batcher's record of which list took each row", () => {
  it("still knows the batch of a person's earlier version after list numbers outgrow two bytes", () => {
    // One person a batch: every add cuts its list, and the next add opens a new one.
    const batcher = new Batcher(() => 1);
    const lists = 40_000;
    for (let seq = 0; seq < lists; seq++) {
      const cut = batcher.add(null, entry(seq), -1);
      expect(cut.map((b) => b.index)).toEqual([seq]);
    }
    // Earlier versions both below and above 32,767 lists.
    for (const earlier of [5, 39_990]) {
      expect(batcher.batched(earlier)).toBe(true);
      const [later] = batcher.add(null, entry(lists + earlier), earlier);
      expect(later?.after).toEqual([earlier]);
    }
    expect(batcher.batched(lists + 100_000)).toBe(false);
  });

  it("replaces a version waiting in an open list in place, past the same point", () => {
    const batcher = new Batcher(() => 40_001);
    for (let seq = 0; seq < 40_000; seq++) expect(batcher.add(null, entry(seq), -1)).toEqual([]);
    // A later version of person 39,999 takes its earlier version's place: the list stays at 40,000.
    expect(
      batcher.add(null, { ...entry(40_000), person: '{"email":"p39999@x.org","firstName":"Z"}' }, 39_999),
    ).toEqual([]);
    const [batch] = batcher.finish();
    expect(batch?.entries).toHaveLength(40_000);
    expect(batch?.entries[39_999]?.seq).toBe(40_000);
  });
});
