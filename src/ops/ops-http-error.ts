import { type ErrorCode, type Problem, RecruitSyncError } from "../errors/index.ts";

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
