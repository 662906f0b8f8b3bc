import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scrubFolder } from "../../src/forget/scrub-files.ts";
import { mentionTest, subjectHashes, valueIsWho, whoFrom } from "../../src/forget/who.ts";

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("who a forget is about", () => {
  it("takes emails in any case and phones however written, and refuses anything else without echoing it", () => {
    const who = whoFrom([" Ada@Example.org ", "+1 (415) 555-0142"]);
    expect([...who.emails]).toEqual(["ada@example.org"]);
    expect(who.phones.has("+14155550142")).toBe(true);
    expect(() => whoFrom(["Ada Lovelace"])).toThrow(/identifier 1 is neither an email nor a phone number/);
    expect(() => whoFrom(["Ada Lovelace"])).not.toThrow(/Ada/);
    expect(() => whoFrom([" "])).toThrow(/give at least one email or phone number/);
  });

  it("finds the person's values and nobody else's", () => {
    const who = whoFrom(["ada@example.org", "+14155550142"]);
    const mentions = mentionTest(who);
    expect(mentions('{"email":"ADA@example.org"}')).toBe(true);
    expect(mentions("2,bad,bada@example.org")).toBe(false);
    expect(mentions("2,bad,ada@example.org.uk")).toBe(false);
    expect(mentions("x,+14155550142,y")).toBe(true);
    expect(mentions("x,+141555501420,y")).toBe(false);
    expect(valueIsWho(who, "(415) 555-0142")).toBe(true);
    expect(valueIsWho(who, "415-555-0143")).toBe(false);
    expect(valueIsWho(who, ["x@y.z", "Ada@Example.org"])).toBe(true);
  });

  it("names people in the receipt by hashes that do not hold them", () => {
    const hashes = subjectHashes(whoFrom(["ada@example.org", "+14155550142"]));
    expect(hashes).toHaveLength(2);
    expect(hashes.join()).not.toMatch(/ada|4155550142/);
    expect(subjectHashes(whoFrom(["ADA@example.org", "+1 415 555 0142"]))).toEqual(hashes);
  });
});

describe("scrubbing a folder", () => {
  it("drops JSON lines and CSV records of the person, keeps a multi-line record of another, and deletes a file it cannot rewrite", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "forget-scrub-"));
    const part = path.join(dir, "participants", "part-1");
    await mkdir(path.dirname(part), { recursive: true });
    await writeFile(
      `${part}.ndjson`,
      '{"person_id":"person_7","email":"ada@example.org"}\n{"person_id":"person_8","email":"bea@example.org"}\n',
    );
    // The CSV part names the person only by id: found through the JSON line that names their email.
    await writeFile(`${part}.csv`, 'person_id,note\nperson_7,"first\nsecond"\nperson_8,"keep,\nme"\n');
    await writeFile(path.join(dir, "rows.spill"), 'x{"email":"ada@example.org"}\n');
    await writeFile(path.join(dir, "other.bin"), "nothing of hers");
    // A database no warehouse URL names: reported, never deleted with everyone else in it.
    await writeFile(path.join(dir, "old.duckdb"), 'x{"email":"ada@example.org"}');
    const who = whoFrom(["ada@example.org"]);
    const removed = await scrubFolder(dir, who, () => false);
    expect(removed.sort((a, b) => a.file.localeCompare(b.file))).toEqual([
      { file: "old.duckdb", action: "left", rows: 0 },
      { file: path.join("participants", "part-1.csv"), action: "rewritten", rows: 1 },
      { file: path.join("participants", "part-1.ndjson"), action: "rewritten", rows: 1 },
      { file: "rows.spill", action: "deleted", rows: 0 },
    ]);
    expect(await readFile(`${part}.ndjson`, "utf8")).toBe(
      '{"person_id":"person_8","email":"bea@example.org"}\n',
    );
    expect(await readFile(`${part}.csv`, "utf8")).toBe('person_id,note\nperson_8,"keep,\nme"\n');
    expect([...who.personIds]).toEqual(["person_7"]);
    expect(await readFile(path.join(dir, "other.bin"), "utf8")).toBe("nothing of hers");
  });
});
