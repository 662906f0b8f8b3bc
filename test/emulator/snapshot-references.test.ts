import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Snapshot } from "../../src/emulator/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function putSnapshot(e: TestEmulator, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await e.admin("/snapshot", { method: "PUT", body });
  return { status: res.status, json: await res.json() };
}

describe("PUT /__emulator/snapshot: the records a snapshot's records name", () => {
  it("refuses a participant whose person or study is not in the snapshot, naming each, and keeps the store", async () => {
    emu = await startTestEmulator({ sizes: { people: 8, participantsPerStudy: 3 } });
    const before = await emu.snapshot();
    // What a hand-trimmed snapshot looks like: a person and a study left out, their participants kept.
    const trimmed: Snapshot = {
      ...before,
      people: before.people.filter((p) => p.personId !== "person_3"),
      studies: before.studies.filter((s) => s.studyId !== "study_9"),
    };
    const expected = trimmed.participants.flatMap((p, i) => [
      ...(p.personId === "person_3"
        ? [{ message: expect.stringContaining("person_3"), path: ["participants", i, "personId"] }]
        : []),
      ...(p.studyId === "study_9"
        ? [{ message: expect.stringContaining("study_9"), path: ["participants", i, "studyId"] }]
        : []),
    ]);
    expect(expected.length).toBeGreaterThanOrEqual(2);

    const put = await putSnapshot(emu, trimmed);
    expect(put.status).toBe(400);
    expect((put.json as { errors: unknown[] }).errors).toEqual(expected);
    const first = trimmed.participants.findIndex((p) => p.personId === "person_3");
    expect((put.json as { errors: { message: string }[] }).errors[0]?.message).toBe(
      `participant ${trimmed.participants[first]?.participantId} is of person person_3, who is not in the snapshot: add the person or leave the participant out`,
    );
    expect(await emu.snapshot()).toEqual(before);
  });

  it("names the first 20 participants without their person and counts the rest", async () => {
    emu = await startTestEmulator({ sizes: { people: 8, participantsPerStudy: 3 } });
    const before = await emu.snapshot();
    const put = await putSnapshot(emu, { ...before, people: [] });
    expect(put.status).toBe(400);
    const errors = (put.json as { errors: { message: string; path: unknown[] }[] }).errors;
    expect(errors.slice(0, 20).map((e) => e.path)).toEqual(
      Array.from({ length: 20 }, (_, i) => ["participants", i, "personId"]),
    );
    expect(errors.slice(20)).toEqual([
      {
        message: `and ${before.participants.length - 20} more participants whose person or study is not in the snapshot`,
        path: ["participants"],
      },
    ]);
  });
});

describe("the --state file: the records its records name", () => {
  it("refuses to start from a file whose participant's person is not in it, naming the line", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "emulator-state-"));
    const file = path.join(dir, "state.jsonl");
    try {
      const first = await startTestEmulator({
        stateFile: file,
        sizes: { people: 6, participantsPerStudy: 3 },
      });
      await first.close();
      const lines = (await readFile(file, "utf8")).split("\n");
      const personLine = lines.findIndex((l) => l.startsWith('{"person":{"personId":"person_2"'));
      expect(personLine).toBeGreaterThan(0);
      lines.splice(personLine, 1);
      await writeFile(file, lines.join("\n"));
      const participantLine =
        lines.findIndex((l) => l.startsWith('{"participant":') && l.includes('"personId":"person_2"')) + 1;

      // An emulator that starts anyway is closed, not left listening.
      const outcome = await startTestEmulator({ stateFile: file }).then(
        async (e) => {
          await e.close();
          return "started";
        },
        (err: unknown) => err,
      );
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toMatch(
        new RegExp(
          `line ${participantLine}: participant participant_\\d+ is of person person_2, who is not in the file`,
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
