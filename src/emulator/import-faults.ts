import type { ImportParticipantsBody, ImportPerson, ImportResult } from "../api/index.ts";
import type { FaultDecision, FaultInjector } from "./faults.ts";

/**
 * Whether an import under `dropPeopleRate` silently leaves this person out: a
 * hash of the seed and the person's identifier value, so the same people are
 * left out however the file is batched, and a test can name them in advance.
 *
 * @example
 * const lost = emails.filter((e) => dropsPerson(seed, 0.01, e));
 */
export function dropsPerson(seed: number, rate: number, key: string): boolean {
  if (rate <= 0) return false;
  if (rate >= 1) return true;
  // FNV-1a, 32 bits: tiny, stable on every machine, well spread for short keys.
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // murmur3's finaliser: FNV alone leaves the high bits, which the share reads, poorly mixed.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32 < rate;
}

/** The value an import matches a person by: the email, the phone, or the identifier property's value. */
export function importKey(identifier: string, person: ImportPerson): string {
  if (identifier === "email") return person.email ?? "";
  if (identifier === "phone") return person.phone ?? "";
  const prop = person.properties?.find((p) => "propertyId" in p && p.propertyId === identifier);
  return prop === undefined ? (person.email ?? person.phone ?? "") : String(prop.value);
}

export interface ImportFaultPlan {
  /** The body the handler sees: the people it keeps. */
  body: ImportParticipantsBody;
  /** Turns the handler's honest answer into the faulty one, recording who was left out. */
  answer(result: ImportResult, studyId: string): ImportResult;
}

/**
 * What a fault decision does to one import request: people left out before the
 * store sees them, and a `count` that still names everyone sent (plus any
 * `countOffset`). Undefined when the decision touches no import.
 */
export function planImportFaults(
  decision: FaultDecision | undefined,
  faults: FaultInjector,
  body: ImportParticipantsBody,
): ImportFaultPlan | undefined {
  if (decision === undefined || (decision.dropPeopleRate <= 0 && decision.countOffset === 0))
    return undefined;
  const sent = body.people.length;
  const kept: ImportPerson[] = [];
  const lost: string[] = [];
  for (const person of body.people) {
    const key = importKey(body.identifier, person);
    if (dropsPerson(faults.seed, decision.dropPeopleRate, key)) lost.push(key);
    else kept.push(person);
  }
  return {
    body: { ...body, people: kept },
    answer(result, studyId) {
      for (const key of lost)
        faults.droppedPeople.push({ studyId, importId: result.importId, identifier: body.identifier, key });
      const count = sent + decision.countOffset;
      return { ...result, count, message: `Imported ${count} people into study ${studyId}` };
    },
  };
}
