import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { CommitPipeline } from "../../src/exports/commit-pipeline.ts";

describe("the commit pipeline", () => {
  it("runs pushes that overlap one after another, in the order pushed, and drain waits for the last", async () => {
    const commits = new CommitPipeline();
    const events: string[] = [];
    const commit = (name: string, ms: number) => async () => {
      events.push(`${name} start`);
      await sleep(ms);
      events.push(`${name} end`);
    };
    await commits.push(commit("a", 30));
    // Two pushes while "a" runs: the stream's own, and one made during a budget wait.
    const b = commits.push(commit("b", 20));
    const c = commits.push(commit("c", 5));
    await Promise.all([b, c]);
    await commits.drain();
    expect(events).toEqual(["a start", "a end", "b start", "b end", "c start", "c end"]);
  });

  it("does not start a commit queued behind one that failed, and drain rethrows that failure", async () => {
    const commits = new CommitPipeline();
    let ran = false;
    await commits.push(async () => {
      await sleep(5);
      throw new Error("warehouse gone");
    });
    const next = commits.push(async () => {
      ran = true;
    });
    await expect(next).rejects.toThrow("warehouse gone");
    await expect(commits.drain()).rejects.toThrow("warehouse gone");
    expect(ran).toBe(false);
  });
});
