import type { Participant } from "../../api/index.ts";
import type { PersonRecord } from "../store/records.ts";
import { participantView } from "../store/snapshot.ts";

interface CachedJson {
  email: string | null | undefined;
  phone: string | null | undefined;
  additionalEmails: readonly string[] | undefined;
  additionalPhones: readonly string[] | undefined;
  json: string;
}

/**
 * Participants never change after they are added, and the person fields a
 * participant shows are replaced (never mutated in place) when a person is
 * updated. So one participant's JSON can be kept and reused for as long as
 * those four values are the same objects, which makes the participants search
 * cost little more than joining strings.
 */
const cache = new WeakMap<Participant, CachedJson>();

export function participantJson(p: Participant, person: PersonRecord | undefined): string {
  const c = cache.get(p);
  if (
    c &&
    c.email === person?.email &&
    c.phone === person?.phone &&
    c.additionalEmails === person?.additionalEmails &&
    c.additionalPhones === person?.additionalPhones
  ) {
    return c.json;
  }
  const json = JSON.stringify(participantView(p, person));
  cache.set(p, {
    email: person?.email,
    phone: person?.phone,
    additionalEmails: person?.additionalEmails,
    additionalPhones: person?.additionalPhones,
    json,
  });
  return json;
}
