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

/**
 * True when the first row is a person, not a header row, and none of its
 * cells may be shown: it holds an email or a phone number, or values are at
 * least half of its cells. A lone number among names (an exporter's `0` over
 * its row numbers) does not make a header row a person.
 */
export function looksLikeDataRow(cells: readonly string[]): boolean {
  let filled = 0;
  let values = 0;
  for (const cell of cells) {
    const c = cell.trim();
    if (c === "") continue;
    filled++;
    if (EMAIL.test(c) || (PHONE.test(c) && !DATE.test(c))) return true;
    if (looksLikeValue(c)) values++;
  }
  return filled > 0 && values * 2 >= filled;
}

/** What an error says a file has: its headers, or that its first row looks like data (and nothing of it). */
export function describeHeaders(headers: readonly string[], max = 50): string {
  if (looksLikeDataRow(headers)) {
    return "its first row looks like a person's data, not a header row (its cells are not shown): add a header row, or map the columns by position with source.header: false";
  }
  const shown = headers.slice(0, max).join(", ");
  return `it has: ${shown}${headers.length > max ? `, … (${headers.length} in all)` : ""}`;
}
