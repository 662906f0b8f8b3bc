import type { Cluster, Redis } from "ioredis";
import { clearUnverified, personDigest, readUnverified } from "../imports/unverified-people.ts";
import type { Sink } from "../sinks/index.ts";
import { SYNC_LOG_TABLE } from "./table.ts";

/** What one read-back check of a study found. */
export interface StudyCheck {
  studyId: string;
  /** People sent and found among the exported participants. */
  verified: number;
  /** People sent (the service said yes) and not among them. */
  missing: number;
  /** The missing people's digests, for a resend. */
  missingDigests: string[];
}

/** The digests of a study's live exported participants, by email (lower case) and phone. */
async function exportedDigests(sink: Sink, studyId: string): Promise<Set<string>> {
  const found = new Set<string>();
  for (const p of await sink.readTable("participants")) {
    if (p.study_id !== studyId || p._deleted_at != null) continue;
    const emails = [p.email, ...((p.additional_emails as unknown[] | null) ?? [])];
    for (const e of emails) if (typeof e === "string" && e) found.add(personDigest("email", e.toLowerCase()));
    const phones = [p.phone, ...((p.additional_phones as unknown[] | null) ?? [])];
    for (const ph of phones) if (typeof ph === "string" && ph) found.add(personDigest("phone", ph));
  }
  return found;
}

const toCheck = new Set(["unchecked", "unverified"]);

/**
 * Matches the people sent to a study since the last check — those the
 * count-mismatch marks name (Redis) and those sync_log holds as imported and
 * not yet checked — against the study's participants as an export has just
 * written them, by identifier digest. sync_log rows become `verified` or
 * `missing`, and the marks of everyone checked are cleared. Only people
 * logged before `exportStartedAt` are judged: the export may have paged past
 * a person imported while it ran.
 *
 * People keyed by a custom property are not matched (the exported
 * participant does not carry the property): they stay `unchecked`.
 */
export async function reconcileStudy(input: {
  sink: Sink;
  redis?: Redis | Cluster | undefined;
  prefix: string;
  studyId: string;
  exportStartedAt: Date;
  now?: Date;
}): Promise<StudyCheck> {
  const { sink, studyId } = input;
  const now = input.now ?? new Date();
  await sink.prepare([SYNC_LOG_TABLE]);
  const exported = await exportedDigests(sink, studyId);
  const marks = input.redis
    ? await readUnverified(input.redis, input.prefix, studyId)
    : new Map<string, string>();
  const verified = new Set<string>();
  const missing = new Set<string>();
  const judge = (digest: string) => (exported.has(digest) ? verified : missing).add(digest);

  const changed: Record<string, unknown>[] = [];
  for (const row of await sink.readTable(SYNC_LOG_TABLE.name)) {
    if (row.study_id !== studyId || row.outcome !== "imported" || !toCheck.has(String(row.verification)))
      continue;
    if (!String(row.identifier).match(/^(email|phone)$/)) continue;
    const loggedAt = row.logged_at instanceof Date ? row.logged_at : new Date(String(row.logged_at));
    if (loggedAt.getTime() > input.exportStartedAt.getTime()) continue;
    const digest = String(row.person_digest);
    judge(digest);
    changed.push({ ...row, verification: exported.has(digest) ? "verified" : "missing", checked_at: now });
  }
  for (const digest of marks.keys()) judge(digest);
  // A person found once is found: a later run's row of the same person is not missing.
  for (const d of verified) missing.delete(d);

  for (let i = 0; i < changed.length; i += 10_000) {
    const rows = changed.slice(i, i + 10_000);
    const runId = String(rows[0]?.run_id);
    await sink.commit({ runId, upsert: { table: SYNC_LOG_TABLE.name, rows } });
  }
  if (input.redis && marks.size > 0)
    await clearUnverified(input.redis, input.prefix, studyId, [...marks.keys()]);
  return { studyId, verified: verified.size, missing: missing.size, missingDigests: [...missing].sort() };
}
