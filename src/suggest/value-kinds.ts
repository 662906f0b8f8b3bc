/**
 * What a column's sampled values look like. Only shares come out of here:
 * the values themselves stay in the sample.
 */

const EMAIL = /^[^\s@,;]+@[^\s@,;]+\.[^\s@,;]+$/;
const PHONE_CHARS = /^\+?[\d\s().\-/]+$/;
const DATE_LIKE = /^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * The values of a cell that may hold several, as the import splits email and
 * phone cells: Google's " ::: ", then ";" and ",".
 *
 * @example cellValues("+49 151 5550211 ::: +49 30 5550210") // two numbers
 */
export function cellValues(cell: string): string[] {
  return cell
    .split(/\s:::\s|[;,]/)
    .map((v) => v.trim())
    .filter(Boolean);
}

/** A column's sampled values that hold something, trimmed. */
export function filledValues(values: readonly string[]): string[] {
  return values.map((v) => v.trim()).filter(Boolean);
}

/** One address, or a list of them split by " ::: ", ";" or "," (an "additional emails" cell). */
export function looksLikeEmails(value: string): boolean {
  const values = cellValues(value);
  return values.length > 0 && values.every((v) => EMAIL.test(v));
}

/**
 * 7 to 15 digits written as a phone number: with +, or spaces, dashes,
 * dots or brackets, or 10 digits and more in a row. A short plain number
 * is more often an id or a postcode.
 */
export function looksLikePhone(value: string): boolean {
  // A leading apostrophe is a spreadsheet's text guard ("'+44 20 7946 0000"); the phone transform reads past it.
  const v = value.trim().replace(/^'/, "");
  if (!PHONE_CHARS.test(v) || DATE_LIKE.test(v) || IPV4.test(v)) return false;
  const digits = v.replace(/\D/g, "").length;
  if (digits < 7 || digits > 15) return false;
  return v.startsWith("+") || /[\s().\-/]/.test(v) || digits >= 10;
}

export interface ValueShares {
  /** Non-empty cells sampled. */
  filled: number;
  email: number;
  phone: number;
}

/** The share of a column's non-empty sampled cells that read as emails, and as phone numbers. */
export function valueShares(values: readonly string[]): ValueShares {
  const filled = filledValues(values);
  if (filled.length === 0) return { filled: 0, email: 0, phone: 0 };
  let email = 0;
  let phone = 0;
  for (const v of filled) {
    if (looksLikeEmails(v)) email++;
    else if (cellValues(v).every(looksLikePhone)) phone++;
  }
  return { filled: filled.length, email: email / filled.length, phone: phone / filled.length };
}
