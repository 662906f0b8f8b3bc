import type { z } from "zod";
import {
  ConfigError,
  describeProblems,
  type ErrorCode,
  IMPORT_ERROR_CODES,
  type Problem,
  problemsOf,
  RecruitSyncError,
  UsageError,
} from "../errors/index.ts";
import { JobNotFoundError } from "../runtime/index.ts";

/** A problem of a request, as the ops API answers it. */
export type OpsProblem = Problem;

/**
 * A refusal of the ops API, with the HTTP status it answers with. The body is
 * `{error: code, message, problems?}`: `problems` names each path that is
 * wrong, so a script learns everything at once.
 */
export class OpsHttpError extends RecruitSyncError {
  readonly status: number;
  readonly problems: readonly OpsProblem[];

  constructor(status: number, code: ErrorCode, message: string, problems: readonly OpsProblem[] = []) {
    super(code, message, { retryable: false });
    this.status = status;
    this.problems = problems;
  }
}

/** The code a route answers a request that does not parse with (docs/errors.md). */
export type InvalidRequestCode = "ops_invalid_request" | "ops_invalid_overrides";

const importFileCodes: readonly ErrorCode[] = IMPORT_ERROR_CODES;

/**
 * The one table from an error raised below the ops server to its HTTP
 * answer: by class and code, never by the message's text. The first row that
 * matches answers.
 */
const REFUSALS: readonly {
  matches: (err: RecruitSyncError) => boolean;
  answer: (err: RecruitSyncError, invalidRequest: InvalidRequestCode) => OpsHttpError;
}[] = [
  {
    matches: (err) => err instanceof JobNotFoundError,
    answer: (err) => new OpsHttpError(404, "ops_job_unknown", err.message),
  },
  {
    matches: (err) => err instanceof ConfigError,
    answer: (err) => new OpsHttpError(422, "ops_job_invalid", err.message, (err as ConfigError).issues),
  },
  {
    matches: (err) => err.code === "file_not_allowed",
    answer: (err) => new OpsHttpError(403, err.code, err.message, [{ path: "file", message: err.message }]),
  },
  {
    matches: (err) => importFileCodes.includes(err.code),
    answer: (err) => new OpsHttpError(422, err.code, err.message),
  },
  {
    matches: (err) => err instanceof UsageError,
    answer: (err, invalidRequest) =>
      new OpsHttpError(400, invalidRequest, err.message, (err as UsageError).problems),
  },
  {
    // A warehouse file another program holds, a database or Redis away: the same request may pass later.
    // `internal` is a bug or a foreign error, however retryable: the error handler logs it and answers 500.
    matches: (err) => err.retryable && err.code !== "internal",
    answer: (err) => new OpsHttpError(503, err.code, err.message),
  },
];

/**
 * `err` as the ops API answers it, when the table above knows it; anything
 * else is returned as it is, for the error handler to log and answer 500.
 * `hide` is a path the answer must not show (an upload's place on disk).
 */
export function opsRefusal(
  err: unknown,
  invalidRequest: InvalidRequestCode,
  options: { hide?: string } = {},
): unknown {
  if (err instanceof OpsHttpError || !(err instanceof RecruitSyncError)) return err;
  const refusal = REFUSALS.find((r) => r.matches(err))?.answer(err, invalidRequest);
  if (!refusal || options.hide === undefined) return refusal ?? err;
  const hide = (text: string) => text.replaceAll(options.hide as string, "the file");
  return new OpsHttpError(
    refusal.status,
    refusal.code,
    hide(refusal.message),
    refusal.problems.map((p) => ({ ...p, message: hide(p.message) })),
  );
}

/** A query string parsed by its schema, or a 400 `ops_invalid_query` naming each problem. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const parsed = schema.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const problems = problemsOf(parsed.error, { root: "(query)" });
  throw new OpsHttpError(400, "ops_invalid_query", `invalid query: ${describeProblems(problems)}`, problems);
}
