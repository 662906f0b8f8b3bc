import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js";
import type { RowProblem } from "../../row-problem.ts";
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

type PhoneRead = string | RowProblem;

/**
 * Normalises to E.164 with libphonenumber-js. Parsing costs ~10 µs, more than
 * the whole rest of a row, so results are memoised twice: by the number's
 * formatted prefix ("(415) 555-" of "(415) 555-0132"), and by its shape, the
 * digits without their last four, which no numbering plan constrains. Both
 * memos are cleared when full, so memory stays bounded.
 */
export function toE164(defaultCountry: string | undefined): TransformFn {
  const country = defaultCountry as CountryCode | undefined;
  return eachString(byFormattedPrefix(byShape(country, failureOf(country))));
}

/** The ASCII digits of a text: what tells a phone number from its formatting. */
export function countDigits(s: string): number {
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch >= 48 && ch <= 57) digits++;
  }
  return digits;
}

/**
 * Why a number failed: without a default country, a plausible national
 * number (no `+`) failed for want of one; anything else is not a number.
 */
function failureOf(country: CountryCode | undefined): (input: string) => RowProblem {
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
  return (input) => {
    if (country !== undefined || input.includes("+")) return invalid;
    const digits = countDigits(input);
    return digits >= NATIONAL_MIN_DIGITS && digits <= NATIONAL_MAX_DIGITS ? needsCountry : invalid;
  };
}

/** The library's reading of a number as written. */
function parseWhole(
  input: string,
  country: CountryCode | undefined,
  failure: (input: string) => RowProblem,
): PhoneRead {
  const parsed = parsePhoneNumberFromString(input, country);
  return parsed?.isValid() ? parsed.number : failure(input);
}

/**
 * The digits and leading `+` of a number written with the usual formatting
 * only (spaces, brackets, dashes, dots, slashes); undefined for anything
 * else, which goes to the library as written.
 */
function plainDigits(input: string): { plus: string; digits: string } | undefined {
  let digits = "";
  let plus = "";
  for (let i = 0; i < input.length; i++) {
    const ch = input.charCodeAt(i);
    if (ch >= 48 && ch <= 57) digits += input[i];
    else if (ch === 43 && i === 0) plus = "+";
    else if (ch !== 32 && ch !== 40 && ch !== 41 && ch !== 45 && ch !== 46 && ch !== 47) return undefined;
  }
  return { plus, digits };
}

/** Reads numbers memoised by shape: numbers of one shape share their E.164 prefix and what they drop. */
function byShape(
  country: CountryCode | undefined,
  failure: (input: string) => RowProblem,
): (input: string) => PhoneRead {
  const memo = new Map<string, Shape | RowProblem>();
  const shapeOf = (compact: string, digits: string): Shape | RowProblem => {
    const parsed = parsePhoneNumberFromString(compact, country);
    if (!parsed?.isValid()) return failure(compact);
    const national = parsed.nationalNumber;
    // The national number must end with the input's digits for the shape to carry over.
    const drop = digits.length - national.length;
    return drop >= 0 && digits.endsWith(national)
      ? { e164Prefix: `+${parsed.countryCallingCode}`, drop }
      : { e164Prefix: "", drop: -1 };
  };
  return (input) => {
    const plain = plainDigits(input);
    if (plain === undefined || plain.digits.length < 8 || plain.digits.length > 17) {
      return parseWhole(input, country, failure);
    }
    const { plus, digits } = plain;
    const compact = plus + digits;
    const key = `${plus}${digits.length}|${digits.slice(0, -4)}`;
    let shape = memo.get(key);
    if (shape === undefined) {
      shape = shapeOf(compact, digits);
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(key, shape);
    }
    if ("code" in shape) return shape;
    if (shape.drop < 0) return parseWhole(compact, country, failure);
    return shape.e164Prefix + digits.slice(shape.drop);
  };
}

/** Whether a number ends in four digits after something: the common shape "(415) 555-0132". */
function endsInFourDigits(s: string): boolean {
  for (let i = s.length - 4; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch < 48 || ch > 57) return false;
  }
  return s.length > 8;
}

/** Reads numbers memoised by formatted prefix (all but four trailing digits) → E.164 prefix. */
function byFormattedPrefix(read: (input: string) => PhoneRead): (raw: string) => PhoneRead {
  const prefixes = new Map<string, PhoneRead>();
  return (raw) => {
    const input = raw.trim();
    if (!endsInFourDigits(input)) return read(input);
    const head = input.slice(0, -4);
    const tail = input.slice(-4);
    const known = prefixes.get(head);
    if (typeof known === "string") return known + tail;
    if (known !== undefined) return known;
    const out = read(input);
    const e164 = typeof out === "string" && out.endsWith(tail) ? out.slice(0, -4) : undefined;
    if (prefixes.size >= MEMO_LIMIT) prefixes.clear();
    if (e164 !== undefined) prefixes.set(head, e164);
    else if (typeof out !== "string") prefixes.set(head, out);
    return out;
  };
}
