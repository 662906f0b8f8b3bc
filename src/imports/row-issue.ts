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
