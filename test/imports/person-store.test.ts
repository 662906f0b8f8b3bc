import { stat } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hash32 } from "../../src/imports/dedupe.ts";
import { PersonStore } from "../../src/imports/person-store.ts";
import { dedupeKey } from "../../src/imports/rules/index.ts";
import { type Scratch, scratch } from "./fixtures.ts";

let s: Scratch;
let store: PersonStore;
beforeEach(async () => {
  s = await scratch();
  store = await PersonStore.create(path.join(s.dir, "rows.spill"), "email");
});
afterEach(async () => {
  await store.close();
  await s.cleanup();
});

/** Puts a row and waits for its write when the store asks to. */
async function put(row: number, population: string | null, email: string, fields: Record<string, unknown>) {
  const p = store.put(row, population, email, JSON.stringify({ email, ...fields }));
  if (p.written) await p.written;
  return p;
}

/** Two identifier values whose (population-less) keys share a 32-bit hash: found by the birthday bound. */
function collidingEmails(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const email = `person${i}@example.org`;
    const h = hash32(dedupeKey(null, email));
    const other = seen.get(h);
    if (other !== undefined) return [other, email];
    seen.set(h, email);
  }
}

describe("the person store", () => {
  it("merges a person's later row into their latest version, later values winning, their rows in order", async () => {
    const first = await put(2, null, "ada@example.org", { firstName: "Ada", lastName: "Byron" });
    await put(3, null, "bob@example.org", { firstName: "Bob" });
    const second = await put(5, null, "ada@example.org", { lastName: "Lovelace" });
    expect(first.earlier).toBe(-1);
    expect(second.earlier).toBe(first.version.seq);
    expect(second.version.rows).toEqual([2, 5]);
    expect(JSON.parse(second.version.person)).toEqual({
      email: "ada@example.org",
      firstName: "Ada",
      lastName: "Lovelace",
    });
    expect(store.count).toBe(3);
    expect(store.version(second.version.seq)).toEqual(second.version);
  });

  it("keeps the same identifier in two populations as two people", async () => {
    await put(2, "pop_a", "ada@example.org", { firstName: "Ada" });
    const other = await put(3, "pop_b", "ada@example.org", { firstName: "Augusta" });
    expect(other.earlier).toBe(-1);
    expect(JSON.parse(other.version.person).firstName).toBe("Augusta");
  });

  it("keeps two identifiers that share a hash as two people, each merged with its own rows", async () => {
    const [a, b] = collidingEmails();
    await put(2, null, a, { firstName: "A" });
    const bFirst = await put(3, null, b, { firstName: "B" });
    expect(bFirst.earlier).toBe(-1);
    const aAgain = await put(4, null, a, { lastName: "Again" });
    expect(aAgain.earlier).toBe(0);
    expect(JSON.parse(aAgain.version.person)).toEqual({ email: a, firstName: "A", lastName: "Again" });
    const bAgain = await put(5, null, b, { lastName: "Too" });
    expect(bAgain.earlier).toBe(bFirst.version.seq);
    expect(bAgain.version.rows).toEqual([3, 5]);
  });

  it("gives a person's first row alone, from the buffer and once written to the file", async () => {
    await put(2, null, "ada@example.org", { firstName: "Ada" });
    // Enough other people to push Ada's lines out of the 2 MB write buffer.
    for (let i = 0; i < 6000; i++) await put(10 + i, null, `p${i}@example.org`, { note: "x".repeat(400) });
    await put(7000, null, "ada@example.org", { lastName: "Lovelace" });
    const last = await put(7001, null, "ada@example.org", { lastName: "King" });
    expect(last.version.rows).toEqual([2, 7000, 7001]);
    expect(JSON.parse(store.firstVersion(last.version.seq))).toEqual({
      email: "ada@example.org",
      firstName: "Ada",
    });
  });

  it("keeps its file private to the user running the import", async () => {
    await put(2, null, "ada@example.org", { firstName: "Ada" });
    await store.flush();
    expect((await stat(path.join(s.dir, "rows.spill"))).mode & 0o777).toBe(0o600);
  });
});
