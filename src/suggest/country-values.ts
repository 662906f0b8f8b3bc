import { getCountries, isSupportedCountry } from "libphonenumber-js";
import { foldAccents } from "./fold-accents.ts";

/** The languages country names are read in: those `jobs suggest` knows headers in. */
const NAME_LANGUAGES = ["en", "de", "fr", "es"] as const;

function plain(s: string): string {
  return foldAccents(s)
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

/** Names people write that the region names of ICU do not. */
const EXTRA_NAMES: Record<string, string> = {
  usa: "US",
  "u s a": "US",
  "united states of america": "US",
  america: "US",
  uk: "GB",
  "u k": "GB",
  england: "GB",
  scotland: "GB",
  wales: "GB",
  "great britain": "GB",
  "northern ireland": "GB",
  holland: "NL",
  "the netherlands": "NL",
  eeuu: "US",
  "estados unidos de america": "US",
  "republica federal de alemania": "DE",
  brd: "DE",
};

let byName: Map<string, string> | undefined;

/** Every country libphonenumber knows, by its name in each language (built once, from ICU). */
function namesIndex(): Map<string, string> {
  if (byName) return byName;
  byName = new Map(Object.entries(EXTRA_NAMES));
  for (const lang of NAME_LANGUAGES) {
    const names = new Intl.DisplayNames([lang], { type: "region" });
    for (const code of getCountries()) {
      const name = names.of(code);
      if (name && name !== code && !byName.has(plain(name))) byName.set(plain(name), code);
    }
  }
  return byName;
}

/**
 * The shortest cut-off name read as a country: old exports cut their cells at
 * a fixed width ("United States of Ame", 20 characters), and eight letters
 * are enough to tell most names apart without taking a word for one
 * ("Korea" names two, "Guinea" four).
 */
export const MIN_COUNTRY_PREFIX = 8;

const byPrefix = new Map<string, string | undefined>();

/** The one country whose names start with `key`, if only one does. */
function countryOfPrefix(key: string): string | undefined {
  if (byPrefix.has(key)) return byPrefix.get(key);
  let found: string | undefined;
  let several = false;
  for (const [name, code] of namesIndex()) {
    if (!name.startsWith(key)) continue;
    if (found !== undefined && found !== code) several = true;
    found = code;
  }
  const code = several ? undefined : found;
  if (byPrefix.size < 1000) byPrefix.set(key, code);
  return code;
}

/**
 * The ISO 3166 alpha-2 code a country cell names: a code (DE, de), or a
 * name in English, German, French or Spanish (Germany, Deutschland,
 * Allemagne, Alemania), or the start of one, of at least
 * MIN_COUNTRY_PREFIX characters, that no other country's name starts with
 * ("United States of Ame", cut off by an old export). undefined for
 * anything else.
 *
 * @example countryOfValue("Deutschland") === "DE"; countryOfValue("es") === "ES"; countryOfValue("United States of Ame") === "US"
 */
export function countryOfValue(value: string): string | undefined {
  const v = value.trim();
  if (v === "") return undefined;
  if (/^[A-Za-z]{2}$/.test(v)) {
    const code = v.toUpperCase() === "UK" ? "GB" : v.toUpperCase();
    return isSupportedCountry(code) ? code : undefined;
  }
  const key = plain(v);
  const exact = namesIndex().get(key);
  if (exact !== undefined || key.length < MIN_COUNTRY_PREFIX) return exact;
  return countryOfPrefix(key);
}

/**
 * Country-code top-level domains sites use as generic words (.io, .co, .me,
 * .tv, .ai…): an address there says nothing about where its owner lives.
 */
const GENERIC_CC_DOMAINS = new Set([
  "io",
  "co",
  "me",
  "tv",
  "ai",
  "ly",
  "fm",
  "am",
  "to",
  "cc",
  "ws",
  "gg",
  "sh",
  "ac",
  "su",
  "so",
  "app",
]);

/**
 * The country of an email address's domain: .de → DE, .co.uk → GB, .es →
 * ES. undefined for generic domains (.com, .org, .io).
 *
 * @example countryOfEmail("ana@correo.es") === "ES"
 */
export function countryOfEmail(email: string): string | undefined {
  const at = email.lastIndexOf("@");
  if (at < 0) return undefined;
  const tld = email
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .split(".")
    .pop();
  if (tld?.length !== 2 || GENERIC_CC_DOMAINS.has(tld)) return undefined;
  const code = tld === "uk" ? "GB" : tld.toUpperCase();
  return isSupportedCountry(code) ? code : undefined;
}
