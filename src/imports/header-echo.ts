/**
 * Errors about a file's columns name its headers, so that the mend is
 * obvious. A file without a header row has a person's cells where the
 * headers should be; those must never reach an error, a log or a report.
 */

const EMAIL = /@/;
const PHONE = /^\+?[\d\s().-]{7,}$/;
const DATE = /^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}/;
const NUMBER = /^-?\d+([.,]\d+)?$/;

/** A cell that reads as a value (an email, a phone number, a date, a number) rather than a column's name. */
export function looksLikeValue(cell: string): boolean {
  const c = cell.trim();
  return EMAIL.test(c) || PHONE.test(c) || DATE.test(c) || NUMBER.test(c);
}

/** True when the first row holds a value: it is a person, not a header row, and none of its cells may be shown. */
export function looksLikeDataRow(cells: readonly string[]): boolean {
  return cells.some(looksLikeValue);
}

/** What an error says a file has: its headers, or that its first row looks like data (and nothing of it). */
export function describeHeaders(headers: readonly string[], max = 50): string {
  if (looksLikeDataRow(headers)) {
    return "its first row looks like a person's data, not a header row (its cells are not shown): add a header row, or map the columns by position with source.header: false";
  }
  const shown = headers.slice(0, max).join(", ");
  return `it has: ${shown}${headers.length > max ? `, … (${headers.length} in all)` : ""}`;
}
