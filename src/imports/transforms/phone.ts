import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js";
import type { RowProblem } from "../row-problem.ts";
import { eachString, fail, type TransformFn } from "./cell-value.ts";

const MEMO_LIMIT = 20_000;

/**
 * Digits a number without `+` needs before the missing default country is
 * taken for the reason it failed: "12" is no phone anywhere, while 6 to 17
 * digits read as a national number in some plan (the shortest plans in use
 * have 5-digit subscriber numbers, which their users write with `+`).
 */
const NATIONAL_MIN_DIGITS = 6;
const NATIONAL_MAX_DIGITS = 17;

/**
 * The failure of a number that may be fine once a default country is known.
 * Its code lets the report count these and point to the option; the wording
 * names both the CLI flag and the job key, since either may be the way in.
 */
export const PHONE_NEEDS_COUNTRY = "phone_needs_country";

interface Shape {
  e164Prefix: string;
  /** How many leading input digits the national/international prefix took. */
  drop: number;
}

/**
 * Normalises to E.164 with libphonenumber-js. Parsing costs ~10 µs, more than
 * the whole rest of a row, so results are memoised per number shape: the
 * digits without their last four, which no numbering plan constrains. The
 * memo is cleared when full, so memory stays bounded.
 */
export function toE164(defaultCountry: string | undefined): TransformFn {
  const country = defaultCountry as CountryCode | undefined;
  const memo = new Map<string, Shape | RowProblem>();
  const invalid = fail(
    "invalid_phone",
    country
      ? `not a valid phone number (default country ${country})`
      : "not a valid international phone number (no default country)",
  );
  const needsCountry = fail(
    PHONE_NEEDS_COUNTRY,
    "a national number (no +) and no default country: set the phone country (--phone-country, the console's Phone country, job key phoneCountry)",
  );
  /** Without a default country, a plausible national number failed for want of one. */
  const failure = (input: string): RowProblem => {
    if (country !== undefined || input.includes("+")) return invalid;
    let digits = 0;
    for (let i = 0; i < input.length; i++) {
      const ch = input.charCodeAt(i);
      if (ch >= 48 && ch <= 57) digits++;
    }
    return digits >= NATIONAL_MIN_DIGITS && digits <= NATIONAL_MAX_DIGITS ? needsCountry : invalid;
  };
  // Formatted prefix (all but four trailing digits) → E.164 prefix, for the common shape "(415) 555-0132".
  const prefixes = new Map<string, string | RowProblem>();
  const endsInFourDigits = (s: string) => {
    for (let i = s.length - 4; i < s.length; i++) {
      const ch = s.charCodeAt(i);
      if (ch < 48 || ch > 57) return false;
    }
    return s.length > 8;
  };
  return eachString((raw) => {
    const input = raw.trim();
    if (endsInFourDigits(input)) {
      const head = input.slice(0, -4);
      const known = prefixes.get(head);
      if (typeof known === "string") return known + input.slice(-4);
      if (known !== undefined) return known;
    }
    const out = slow(input);
    if (endsInFourDigits(input)) {
      const e164 = typeof out === "string" && out.endsWith(input.slice(-4)) ? out.slice(0, -4) : undefined;
      if (prefixes.size >= MEMO_LIMIT) prefixes.clear();
      if (e164 !== undefined) prefixes.set(input.slice(0, -4), e164);
      else if (typeof out !== "string") prefixes.set(input.slice(0, -4), out);
    }
    return out;
  });

  function slow(input: string): string | RowProblem {
    // Digits and a leading +, skipping the usual formatting; anything else goes to the library as written.
    let digits = "";
    let plus = "";
    let plain = true;
    for (let i = 0; i < input.length; i++) {
      const ch = input.charCodeAt(i);
      if (ch >= 48 && ch <= 57) digits += input[i];
      else if (ch === 43 && i === 0) plus = "+";
      else if (ch !== 32 && ch !== 40 && ch !== 41 && ch !== 45 && ch !== 46 && ch !== 47) {
        plain = false;
        break;
      }
    }
    if (!plain || digits.length < 8 || digits.length > 17) {
      const parsed = parsePhoneNumberFromString(input, country);
      return parsed?.isValid() ? parsed.number : failure(input);
    }
    const compact = plus + digits;
    const key = `${plus}${digits.length}|${digits.slice(0, -4)}`;
    let shape = memo.get(key);
    if (shape === undefined) {
      const parsed = parsePhoneNumberFromString(compact, country);
      if (parsed?.isValid()) {
        const national = parsed.nationalNumber;
        // The national number must end with the input's digits for the shape to carry over.
        const drop = digits.length - national.length;
        shape =
          drop >= 0 && digits.endsWith(national)
            ? { e164Prefix: `+${parsed.countryCallingCode}`, drop }
            : { e164Prefix: "", drop: -1 };
      } else shape = failure(compact);
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(key, shape);
    }
    if ("code" in shape) return shape;
    if (shape.drop < 0) {
      const parsed = parsePhoneNumberFromString(compact, country);
      return parsed?.isValid() ? parsed.number : failure(compact);
    }
    return shape.e164Prefix + digits.slice(shape.drop);
  }
}
