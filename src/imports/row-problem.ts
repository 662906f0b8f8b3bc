import { z } from "zod";
import type { ApiErrorCode } from "../api/index.ts";

/**
 * The codes of what can be wrong with one row: one closed list, each
 * documented in docs/errors.md, "Row-level codes"
 * (test/imports/row-problem-codes.test.ts fails when the two disagree).
 */
/** Reading a row and its cells, and finding its person's identifier and population. */
const READ_CODES = [
  "ragged_row",
  "field_too_long",
  "invalid_characters",
  "missing_identifier",
  "unknown_population",
] as const;

/** A column's transforms (src/imports/rules/transforms). `consent_unstated` is a warning, never a reject. */
const TRANSFORM_CODES = [
  "invalid_date",
  "not_boolean",
  "not_text",
  "invalid_phone",
  "phone_needs_country",
  "consent_unstated",
] as const;

/** zod's issue codes: the contract's schema of a person field refused a value (check-person.ts). */
export const SCHEMA_CODES = [
  "invalid_type",
  "too_big",
  "too_small",
  "invalid_format",
  "not_multiple_of",
  "unrecognized_keys",
  "invalid_union",
  "invalid_key",
  "invalid_element",
  "invalid_value",
  "custom",
] as const;

/** An opt-out list's own (opt-out.ts). */
const OPT_OUT_CODES = ["invalid_identifier", "person_not_found"] as const;

/**
 * The service refused the person: the code of its answer (ApiError's, see
 * docs/errors.md), kept per row with the path its errors named.
 */
export const SERVICE_CODES = [
  "validation_failed",
  "bad_request",
  "http_error",
] as const satisfies readonly ApiErrorCode[];

export const ROW_PROBLEM_CODES = [
  ...READ_CODES,
  ...TRANSFORM_CODES,
  ...SCHEMA_CODES,
  ...OPT_OUT_CODES,
  ...SERVICE_CODES,
] as const;

export const RowProblemCode = z.enum(ROW_PROBLEM_CODES);
export type RowProblemCode = z.infer<typeof RowProblemCode>;

/**
 * What is wrong with a row: where in the person (the service's path, or the
 * field; `[]` for the whole row, or the cell of a transform's failure before
 * its column names it), what, and the row, the header being row 1 as a
 * spreadsheet shows it (absent for a person the service refused, whose rows
 * are its entry's). Bad rows are data: problems flow to the rejects file,
 * the warnings file and the report; only faults of infrastructure throw.
 * Messages never quote the cell, which may hold personal data.
 */
export const RowProblem = z.object({
  code: RowProblemCode,
  path: z.array(z.union([z.string(), z.number()])),
  message: z.string(),
  row: z.number().int().positive().optional(),
});
export type RowProblem = z.infer<typeof RowProblem>;

/**
 * A value `invalidOptionalValues: drop` left out of an imported person: a
 * problem that did not reject its row, with how the warnings file names its
 * place: `field` (`phone`, `property "Company"`) and `column`, the file's header.
 */
export const DroppedValue = RowProblem.extend({ field: z.string(), column: z.string() });
export type DroppedValue = z.infer<typeof DroppedValue>;

/** The reason written to the rejects file and counted in the report. */
export function reasonOf(problems: readonly Pick<RowProblem, "message">[]): string {
  return problems.map((p) => p.message).join("; ");
}

/** A row's distinct codes, in the order its problems came: the rejects file's `_reject_code`, joined with ";". */
export function codesOf(problems: readonly Pick<RowProblem, "code">[]): RowProblemCode[] {
  return [...new Set(problems.map((p) => p.code))];
}

/** Rows rejected, and how many each reason and each code refused: what a phase's counts hold of its rejects. */
export interface RejectTally {
  rejected: number;
  rejectedByReason: Record<string, number>;
  /** A row with two codes counts under both. */
  rejectedByCode: Record<string, number>;
}

/**
 * Counts `rows` rejected rows by their reason and by each of their codes (a
 * row with two codes counts under both, so the codes' counts may add up to
 * more than the rows rejected).
 */
export function tallyRejects(
  into: Pick<RejectTally, "rejectedByReason" | "rejectedByCode">,
  reason: string,
  codes: readonly RowProblemCode[],
  rows = 1,
): void {
  into.rejectedByReason[reason] = (into.rejectedByReason[reason] ?? 0) + rows;
  for (const code of codes) into.rejectedByCode[code] = (into.rejectedByCode[code] ?? 0) + rows;
}
