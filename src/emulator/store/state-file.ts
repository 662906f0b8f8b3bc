import { once } from "node:events";
import { createReadStream } from "node:fs";
import { access, mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import { Participant } from "../../api/index.ts";
import { PersonRecord } from "./records.ts";
import {
  loadParticipant,
  loadPerson,
  loadSnapshot,
  participantProblems,
  participantViews,
  Snapshot,
  secondParticipation,
  smallCollections,
} from "./snapshot.ts";
import type { Store } from "./store.ts";

/**
 * The --state file: JSON lines, so a million people are written and read one
 * line at a time (a single JSON document that size would not fit a string).
 * Line 1 holds every small collection and the clock offset; then one line per
 * person (`{"person":…}`) and per participant (`{"participant":…}`).
 */
const Header = z.object({
  format: z.literal("recruit-sync-emulator-state"),
  version: z.literal(1),
  clockOffsetMs: z.number(),
  snapshot: Snapshot,
});
const Line = z.union([z.object({ person: PersonRecord }), z.object({ participant: Participant })]);

export async function saveState(
  file: string,
  store: Store,
  clockOffsetMs: number,
  now: number,
): Promise<void> {
  // The file holds every person's email and phone: owner-only whatever the
  // umask or the folder's mode. A fresh temporary file (never one left by a
  // crash, whose mode could be anything) is created 0600 and renamed over.
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  await rm(tmp, { force: true });
  const handle = await open(tmp, "wx", 0o600);
  // A umask can only take bits away; chmod puts back any owner bit it took.
  await handle.chmod(0o600);
  const out = handle.createWriteStream({ encoding: "utf8" });
  const write = async (line: string) => {
    if (!out.write(`${line}\n`)) await once(out, "drain");
  };
  const snapshot = { ...smallCollections(store, now), people: [], participants: [] };
  await write(JSON.stringify({ format: "recruit-sync-emulator-state", version: 1, clockOffsetMs, snapshot }));
  for (const person of store.people.values()) await write(JSON.stringify({ person }));
  for (const participant of participantViews(store)) await write(JSON.stringify({ participant }));
  out.end();
  // "close" comes after the data is written and the file closed (or "error" rejects).
  await once(out, "close");
  await rename(tmp, file);
}

export async function stateFileExists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** Loads a state file into the store; returns the saved clock offset. */
export async function loadState(file: string, store: Store): Promise<number> {
  const lines = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  let clockOffsetMs = 0;
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === "") continue;
    if (n === 1) {
      const header = Header.parse(JSON.parse(text));
      loadSnapshot(store, header.snapshot);
      clockOffsetMs = header.clockOffsetMs;
      continue;
    }
    const line = Line.parse(JSON.parse(text));
    if ("person" in line) {
      loadPerson(store, line.person);
    } else {
      // People lines come before participant lines (saveState), so a person
      // not loaded by now is not in the file.
      const problem = participantProblems(line.participant, store.people, store.studies, "the file")[0];
      if (problem) throw new Error(`line ${n}: ${problem.message}`);
      const { personId, studyId } = line.participant;
      const first = store.participants.get(studyId)?.byPerson.get(personId);
      if (first) throw new Error(`line ${n}: ${secondParticipation(line.participant, first)}`);
      loadParticipant(store, line.participant);
    }
  }
  if (n === 0) throw new Error(`state file ${file} is empty`);
  return clockOffsetMs;
}
