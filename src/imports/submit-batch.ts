import { type ApiClient, ApiError, ValidationApiError } from "../api/index.ts";
import type { BatchEntry } from "./batch.ts";
import { importBody } from "./batch.ts";
import { ImportRefusedError } from "./import-error.ts";

export interface SubmitTarget {
  studyId: string;
  /** The request's identifier selector: email, phone or a property id. */
  identifier: string;
  population: string | null;
}

export interface SubmitOutcome {
  importIds: string[];
  imported: BatchEntry[];
  rejected: { entry: BatchEntry; reason: string }[];
  requests: number;
  /** Service counts that differ from what was sent, for the report's warnings. */
  countMismatches: number;
  /** Each request whose answer counted otherwise, with the people it carried. */
  mismatches: { importId: string; sent: number; counted: number; entries: readonly BatchEntry[] }[];
}

interface Pinned {
  index: number;
  message: string;
}

/** Errors whose path names people[i]; the rest of the path says what in the person was wrong. */
function pin(
  errors: readonly { path: readonly (string | number)[]; message: string }[],
  size: number,
): Pinned[] {
  const out: Pinned[] = [];
  for (const e of errors) {
    const [head, index, ...rest] = e.path;
    if (head !== "people" || typeof index !== "number" || index < 0 || index >= size) continue;
    const where = rest.length ? `${rest.join(".")}: ` : "";
    out.push({ index, message: `service: ${where}${e.message}` });
  }
  return out;
}

type ErrorItem = { path: readonly (string | number)[]; message: string };

/**
 * A refusal of the request itself: every error points outside `people` (the
 * identifier selector, the population, `[]` for the whole body). Resending
 * fewer people cannot help, so it is not bisected.
 */
function isRequestLevel(errors: readonly ErrorItem[]): boolean {
  return errors.length > 0 && errors.every((e) => e.path[0] !== "people");
}

function refusalOf(err: unknown): { errors: { path: (string | number)[]; message: string }[] } | undefined {
  if (err instanceof ValidationApiError) return { errors: err.errors };
  if (err instanceof ApiError && (err.status === 400 || err.status === 413)) return { errors: [] };
  return undefined;
}

/**
 * Sends one batch. A 400 whose error paths point into people[i] rejects those
 * people with the service's message and resends the rest; a refusal that does
 * not say which person (a plain-text 400, a 413, a path of just `people`) is
 * bisected until it does, down to single people. A 400 whose errors all point
 * outside `people` (`identifier`, `populationId`, `[]`) refuses the request
 * itself: it throws ImportRefusedError after that one request, since every
 * smaller request would be refused the same way. Anything else — auth, a
 * missing study, 5xx after the client's retries — is a fault and throws.
 * Once `sendNoMore` is aborted (another batch of the run failed), no further
 * request of this batch goes out, a bisection's included: it throws the
 * signal's reason, and a request already sent is still answered.
 */
export async function submitBatch(
  client: ApiClient,
  target: SubmitTarget,
  entries: readonly BatchEntry[],
  signal?: AbortSignal,
  sendNoMore?: AbortSignal,
): Promise<SubmitOutcome> {
  const outcome: SubmitOutcome = {
    importIds: [],
    imported: [],
    rejected: [],
    requests: 0,
    countMismatches: 0,
    mismatches: [],
  };

  async function send(part: readonly BatchEntry[]): Promise<void> {
    if (part.length === 0) return;
    signal?.throwIfAborted();
    sendNoMore?.throwIfAborted();
    // Sent as built: its people were validated on their way into the spill.
    const body = importBody(part, target.identifier, target.population);
    outcome.requests++;
    try {
      const res = await client.importParticipantsText(target.studyId, body, {
        ...(signal ? { signal } : {}),
        ...(sendNoMore ? { sendNoMore } : {}),
      });
      outcome.importIds.push(res.importId);
      outcome.imported.push(...part);
      if (res.count !== part.length) {
        outcome.countMismatches++;
        outcome.mismatches.push({
          importId: res.importId,
          sent: part.length,
          counted: res.count,
          entries: part,
        });
      }
      return;
    } catch (err) {
      const refusal = refusalOf(err);
      if (refusal === undefined) throw err;
      if (isRequestLevel(refusal.errors)) {
        const said = refusal.errors.map((e) => `${e.path.join(".") || "(body)"}: ${e.message}`).join("; ");
        throw new ImportRefusedError(
          `the service refused the import into ${target.studyId} as a whole, whatever people it holds (${said.slice(0, 500)}); nothing more was sent`,
          refusal.errors,
          { cause: err },
        );
      }
      const pinned = pin(refusal.errors, part.length);
      if (pinned.length > 0) {
        const reasons = new Map<number, string[]>();
        for (const p of pinned) reasons.set(p.index, [...(reasons.get(p.index) ?? []), p.message]);
        for (const [index, msgs] of reasons) {
          outcome.rejected.push({ entry: part[index] as BatchEntry, reason: msgs.join("; ") });
        }
        await send(part.filter((_e, i) => !reasons.has(i)));
        return;
      }
      if (part.length > 1) {
        const mid = Math.ceil(part.length / 2);
        await send(part.slice(0, mid));
        await send(part.slice(mid));
        return;
      }
      const message =
        err instanceof ValidationApiError
          ? err.errors.map((e) => `${e.path.join(".") || "(body)"}: ${e.message}`).join("; ")
          : err instanceof ApiError && err.status === 413
            ? "too large for one request"
            : ((err as ApiError).body?.trim() || "Bad Request").slice(0, 200);
      outcome.rejected.push({ entry: part[0] as BatchEntry, reason: `service: ${message}` });
    }
  }

  await send(entries);
  return outcome;
}
