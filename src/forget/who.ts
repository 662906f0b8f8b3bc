import { hash } from "node:crypto";
import { UsageError } from "../errors/index.ts";

/**
 * The person (or people) a forget is about: their emails in lower case,
 * their phones as given and as digits, and the service's ids of them found
 * on the way. Never logged, never written: the receipt holds `subjectHashes`.
 */
export interface Who {
  emails: Set<string>;
  phones: Set<string>;
  /** Each phone's digits alone, for a cell that wrote it another way ("(415) 555-0100"). */
  phoneDigits: Set<string>;
  personIds: Set<string>;
  participantIds: Set<string>;
}

/** Fewest digits a phone must have to be matched by its digits alone: shorter runs of digits are too common. */
const MIN_PHONE_DIGITS = 7;

const digitsOf = (text: string) => text.replace(/\D/g, "");

/** Sorts what was asked into emails and phones; anything else is a UsageError naming its position, not its text. */
export function whoFrom(identifiers: readonly string[]): Who {
  const who: Who = {
    emails: new Set(),
    phones: new Set(),
    phoneDigits: new Set(),
    personIds: new Set(),
    participantIds: new Set(),
  };
  identifiers.forEach((raw, i) => {
    const value = raw.trim();
    if (value === "") return;
    if (value.includes("@")) {
      who.emails.add(value.toLowerCase());
      return;
    }
    const digits = digitsOf(value);
    if (digits.length < MIN_PHONE_DIGITS || /[^\d\s()+.-]/.test(value))
      throw new UsageError(
        `forget: identifier ${i + 1} is neither an email nor a phone number (give an email, or a phone with at least ${MIN_PHONE_DIGITS} digits)`,
      );
    who.phones.add(value);
    if (value.startsWith("+")) who.phones.add(`+${digits}`);
    who.phoneDigits.add(digits);
  });
  if (who.emails.size === 0 && who.phones.size === 0)
    throw new UsageError("forget: give at least one email or phone number (or --file with one a line)");
  return who;
}

/** The receipt's name for the people: a SHA-256 of each identifier, never the identifier. */
export function subjectHashes(who: Who): string[] {
  return [...who.emails, ...who.phoneDigits]
    .map((v) => hash("sha256", `recruit-sync forget\n${v}`, "hex"))
    .sort();
}

/** Whether one value (a cell, a column's value) is one of the person's identifiers or ids. */
export function valueIsWho(who: Who, value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.some((v) => valueIsWho(who, v));
  const text = String(value).trim();
  if (text === "") return false;
  if (who.emails.has(text.toLowerCase())) return true;
  if (who.phones.has(text) || who.personIds.has(text) || who.participantIds.has(text)) return true;
  const digits = digitsOf(text);
  // A formatted phone: its digits, or its digits with the country code the person's phone has.
  if (digits.length >= MIN_PHONE_DIGITS && /^[\d\s()+.-]+$/.test(text)) {
    for (const d of who.phoneDigits)
      if (d === digits || (d.endsWith(digits) && digits.length >= 9)) return true;
  }
  return false;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A test of a whole text (a line, a record, a file's bytes as UTF-8) for the
 * person's emails and phones as words of their own: `ada@x.org` is not found
 * inside `bada@x.org`. Person and participant ids count as JSON strings only.
 */
export function mentionTest(who: Who): (text: string) => boolean {
  const words = [...who.emails, ...who.phones].map(escapeRe);
  const ids = [...who.personIds, ...who.participantIds].map((id) => `"${escapeRe(id)}"`);
  if (words.length === 0 && ids.length === 0) return () => false;
  const parts = [];
  if (words.length) parts.push(`(?<![\\w.+-])(?:${words.join("|")})(?![\\w-]|\\.\\w)`);
  if (ids.length) parts.push(`(?:${ids.join("|")})`);
  const re = new RegExp(parts.join("|"), "i");
  return (text) => re.test(text);
}
