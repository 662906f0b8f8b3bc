/**
 * Why a row was not imported. Bad rows are data: they flow to the rejects file
 * and the report; only faults of infrastructure throw. Messages never quote the
 * cell, which may hold personal data.
 */
export interface RowIssue {
  code: string;
  /** Where in the person (or the file) it went wrong, e.g. ["email"], ["properties", 2, "value"]. */
  path: (string | number)[];
  message: string;
  /** Row number in the source file, the header being row 1 (as a spreadsheet shows it). */
  row: number;
}

/** The reason written to the rejects file and counted in the report. */
export function reasonOf(issues: readonly RowIssue[]): string {
  return issues.map((i) => i.message).join("; ");
}

/** The code of rows the service itself refused (a 400 naming them, or a batch it would not take). */
export const SERVICE_REJECTED = "service_rejected";

/** A row's distinct codes, in the order its issues came: the rejects file's `_reject_code`, joined with ";". */
export function codesOf(issues: readonly Pick<RowIssue, "code">[]): string[] {
  return [...new Set(issues.map((i) => i.code))];
}

/**
 * Counts `rows` rejected rows by their reason and by each of their codes (a
 * row with two codes counts under both, so the codes' counts may add up to
 * more than the rows rejected).
 */
export function tallyRejects(
  into: { rejectedByReason: Record<string, number>; rejectedByCode: Record<string, number> },
  reason: string,
  codes: readonly string[],
  rows = 1,
): void {
  into.rejectedByReason[reason] = (into.rejectedByReason[reason] ?? 0) + rows;
  for (const code of codes) into.rejectedByCode[code] = (into.rejectedByCode[code] ?? 0) + rows;
}
