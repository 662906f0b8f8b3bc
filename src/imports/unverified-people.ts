import { hash } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import type { ImportPerson } from "../api/index.ts";
import type { BatchEntry } from "./batch.ts";
import type { CountMismatch } from "./count-mismatch.ts";
import { identifierKey } from "./rules/index.ts";

/**
 * People whose landing in the service is in doubt: the people of a request
 * whose answer counted other than it carried (count-mismatch.ts). A later
 * read-back check (a participants export of the study) matches them against
 * the exported participants and clears or reports them.
 *
 * Layout in Redis, one hash tag per study (one Cluster slot):
 *
 * - `<prefix>:unverified:{<studyId>}:people` — a hash: field, personDigest of
 *   the identifier and its value (never the value itself); value, the import
 *   id of the request that carried the person.
 * - `<prefix>:unverified:{<studyId>}:imports` — a hash: import id → JSON
 *   `{batch, sent, counted, identifier, population, at}`.
 * - `<prefix>:unverified:studies` — a set of the studies holding any.
 *
 * Every key expires UNVERIFIED_TTL_SECONDS after its last mark.
 */

/** 35 days, as the change-only state: a monthly export still finds what to check. */
export const UNVERIFIED_TTL_SECONDS = 35 * 86_400;

/**
 * A person's name in the marks: a SHA-256 of the identifier selector and the
 * identifier's value as the import matches it (an email in lower case), so
 * the marks hold no email or phone, and a check that has the exported
 * participant's value finds its mark.
 *
 * @example
 * personDigest("email", "ada@example.org") // 32 hex characters
 */
export function personDigest(identifier: string, value: string): string {
  return hash("sha256", `recruit-sync person\n${identifier}\n${value}`, "hex").slice(0, 32);
}

export function unverifiedKeys(prefix: string, studyId: string): { people: string; imports: string } {
  const base = `${prefix}:unverified:{${studyId}}`;
  return { people: `${base}:people`, imports: `${base}:imports` };
}

export function unverifiedStudiesKey(prefix: string): string {
  return `${prefix}:unverified:studies`;
}

export interface UnverifiedBatch {
  studyId: string;
  /** The job's identifier: `email`, `phone` or `property:<id>`. */
  identifier: string;
  population: string | null;
  mismatch: CountMismatch;
  /** The people the mismatched request carried. */
  entries: readonly BatchEntry[];
}

/** Marks the people of a mismatched request as unverified, with its import id. */
export async function markUnverified(
  redis: Redis | Cluster,
  prefix: string,
  batch: UnverifiedBatch,
  ttlSeconds: number = UNVERIFIED_TTL_SECONDS,
): Promise<number> {
  const keys = unverifiedKeys(prefix, batch.studyId);
  const fields: string[] = [];
  for (const entry of batch.entries) {
    const value = identifierKey(JSON.parse(entry.person) as ImportPerson, batch.identifier);
    if (value !== undefined) fields.push(personDigest(batch.identifier, value), batch.mismatch.importId);
  }
  const about = JSON.stringify({
    batch: batch.mismatch.batch,
    sent: batch.mismatch.sent,
    counted: batch.mismatch.counted,
    identifier: batch.identifier,
    population: batch.population,
    at: new Date().toISOString(),
  });
  const multi = redis.multi();
  if (fields.length > 0) multi.hset(keys.people, ...fields).expire(keys.people, ttlSeconds);
  multi
    .hset(keys.imports, batch.mismatch.importId, about)
    .expire(keys.imports, ttlSeconds)
    .sadd(unverifiedStudiesKey(prefix), batch.studyId)
    .expire(unverifiedStudiesKey(prefix), ttlSeconds);
  await multi.exec();
  return fields.length / 2;
}

/**
 * Clears the marks of people a read-back check found (or gave up on): their
 * digests leave the study's marks, and the study leaves the list of studies
 * to check once it has none. Returns how many marks went.
 */
export async function clearUnverified(
  redis: Redis | Cluster,
  prefix: string,
  studyId: string,
  digests: readonly string[],
): Promise<number> {
  const keys = unverifiedKeys(prefix, studyId);
  const removed = digests.length ? await redis.hdel(keys.people, ...digests) : 0;
  if ((await redis.hlen(keys.people)) === 0) {
    await redis.unlink(keys.people, keys.imports);
    await redis.srem(unverifiedStudiesKey(prefix), studyId);
  }
  return removed;
}

/** The marks of one study: person digest → import id. */
export async function readUnverified(
  redis: Redis | Cluster,
  prefix: string,
  studyId: string,
): Promise<Map<string, string>> {
  return new Map(Object.entries(await redis.hgetall(unverifiedKeys(prefix, studyId).people)));
}
