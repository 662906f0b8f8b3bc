import { describe, expect, it } from "vitest";
import { WaitUnion } from "../../src/governor/index.ts";

describe("time waited on the rate budget, as wall-clock time", () => {
  it("counts eight requests waiting together for the same second once", () => {
    const union = new WaitUnion();
    const waits = Array.from({ length: 8 }, () => union.begin(1000));
    for (const w of waits) union.end(w, 2000);
    expect(union.ms).toBe(1000);
  });

  it("counts overlapping waits by the time they cover, whichever ends first", () => {
    const union = new WaitUnion();
    const a = union.begin(0);
    const b = union.begin(500);
    const c = union.begin(700);
    union.end(c, 800); // inside a and b
    union.end(a, 1000);
    union.end(b, 1500);
    // [0, 1500) covered; a gap, then another wait.
    const d = union.begin(2000);
    union.end(d, 2250);
    expect(union.ms).toBe(1750);
  });

  it("leaves out a wait too short to count, and time nobody waited", () => {
    const union = new WaitUnion();
    const short = union.begin(0);
    union.end(short, 3, false);
    const long = union.begin(10);
    union.end(long, 110);
    expect(union.ms).toBe(100);
  });

  it("merges planned waits that run into each other (progress hears each request's)", () => {
    const union = new WaitUnion();
    union.add(0, 42_000);
    union.add(100, 42_000);
    union.add(41_000, 45_000);
    union.add(50_000, 51_000);
    expect(union.ms).toBe(46_000);
  });

  it("stays right over thousands of waits, two at a time", () => {
    const union = new WaitUnion();
    let t = 0;
    for (let i = 0; i < 10_000; i++) {
      const a = union.begin(t);
      const b = union.begin(t + 1);
      union.end(a, t + 10);
      union.end(b, t + 5);
      t += 20;
    }
    expect(union.ms).toBe(10_000 * 10);
  });
});
