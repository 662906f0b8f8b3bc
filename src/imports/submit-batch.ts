import { type ApiClient, ApiError, ValidationApiError, type ValidationErrorItem } from "../api/index.ts";
import type { BatchEntry } from "./batch.ts";
import { importBody } from "./batch.ts";
import { ImportRefusedError } from "./import-error.ts";
import { type RowProblem, SERVICE_CODES } from "./row-problem.ts";

export interface SubmitTarget {
  studyId: string;
  /** The request's identifier selector: email, phone or a property id. */
  identifier: string;
  population: string | null;
}

export interface SubmitOutcome {
  importIds: string[];
  imported: BatchEntry[];
  /** The people the service refused, each with its problems: the service's code and path within the person. */
  rejected: { entry: BatchEntry; problems: RowProblem[] }[];
  requests: number;
  /** Service counts that differ from what was sent, for the report's warnings. */
  countMismatches: number;
  /** Each request whose answer counted otherwise, with the people it carried. */
  mismatches: { importId: string; sent: number; counted: number; entries: readonly BatchEntry[] }[];
}

type ServiceCode = (typeof SERVICE_CODES)[number];

/**
 * The service's errors whose path names people[i], by i, each as the
 * person's problem: the answer's code, and the rest of the path, which says
 * what in the person was wrong.
 */
function pin(
  errors: readonly ValidationErrorItem[],
  size: number,
  code: ServiceCode,
): Map<number, RowProblem[]> {
  const out = new Map<number, RowProblem[]>();
  for (const e of errors) {
    const [head, index, ...path] = e.path;
    if (head !== "people" || typeof index !== "number" || index < 0 || index >= size) continue;
    const where = path.length ? `${path.join(".")}: ` : "";
    const problems = out.get(index) ?? [];
    problems.push({ code, path, message: `service: ${where}${e.message}` });
    out.set(index, problems);
  }
  return out;
}

/**
 * A refusal of the request itself: every error points outside `people` (the
 * identifier selector, the population, `[]` for the whole body). Resending
 * fewer people cannot help, so it is not bisected.
 */
function isRequestLevel(errors: readonly ValidationErrorItem[]): boolean {
  return errors.length > 0 && errors.every((e) => e.path[0] !== "people");
}

/** A refusal of (some of) the people sent, with the code of the answer: a 400 (JSON or text) or a 413. */
function refusalOf(err: unknown): { code: ServiceCode; errors: ValidationErrorItem[] } | undefined {
  if (err instanceof ValidationApiError) return { code: "validation_failed", errors: err.errors };
  if (err instanceof ApiError && (err.status === 400 || err.status === 413)) {
    const code = SERVICE_CODES.find((c) => c === err.code);
    if (code !== undefined) return { code, errors: [] };
  }
  return undefined;
}

/**
 * Sends one batch. A 400 whose error paths point into people[i] rejects those
 * people with the service's code, path and message, and resends the rest; a refusal that does
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
      const pinned = pin(refusal.errors, part.length, refusal.code);
      if (pinned.size > 0) {
        for (const [index, problems] of pinned)
          outcome.rejected.push({ entry: part[index] as BatchEntry, problems });
        await send(part.filter((_e, i) => !pinned.has(i)));
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
      outcome.rejected.push({
        entry: part[0] as BatchEntry,
        problems: [{ code: refusal.code, path: [], message: `service: ${message}` }],
      });
    }
  }

  await send(entries);
  return outcome;
}
