import { describe, expect, it } from "vitest";
import { aheadByOne } from "../../src/exports/ahead-by-one.ts";

/** A source that logs when each item is asked for and when it is closed. */
function source(n: number, log: string[], failAt?: number): AsyncGenerator<number> {
  return (async function* () {
    try {
      for (let i = 1; i <= n; i++) {
        log.push(`fetch ${i}`);
        await new Promise((r) => setTimeout(r, 1));
        if (i === failAt) throw new Error(`page ${i} failed`);
        yield i;
      }
    } finally {
      log.push("closed");
    }
  })();
}

describe("aheadByOne", () => {
  it("asks for the next item before the caller has handled the current one, in order", async () => {
    const log: string[] = [];
    const got: number[] = [];
    for await (const item of aheadByOne(source(3, log))) {
      log.push(`handle ${item}`);
      got.push(item);
    }
    expect(got).toEqual([1, 2, 3]);
    // The source ends (after item 3) while the caller still handles item 3.
    expect(log).toEqual(["fetch 1", "fetch 2", "handle 1", "fetch 3", "handle 2", "closed", "handle 3"]);
  });

  it("on an early stop waits for the fetch in flight and closes the source", async () => {
    const log: string[] = [];
    for await (const item of aheadByOne(source(5, log))) {
      if (item === 2) break;
    }
    expect(log).toEqual(["fetch 1", "fetch 2", "fetch 3", "closed"]);
  });

  it("hands a failure over only when the caller asks for that item", async () => {
    const log: string[] = [];
    const got: number[] = [];
    const err = await (async () => {
      for await (const item of aheadByOne(source(5, log, 3))) got.push(item);
    })().catch((e: unknown) => e);
    expect(got).toEqual([1, 2]);
    expect((err as Error).message).toBe("page 3 failed");
  });
});
