import { type CountryCode, getCountries, getCountryCallingCode, isSupportedCountry } from "libphonenumber-js";
import { consentWord } from "./consent.ts";

/** The country a calling code shared by several countries is read in: its main one, as libphonenumber has it. */
const MAIN_COUNTRY: Record<string, CountryCode> = {
  "1": "US",
  "7": "RU",
  "39": "IT",
  "44": "GB",
  "47": "NO",
  "61": "AU",
  "212": "MA",
  "262": "RE",
  "290": "SH",
  "358": "FI",
  "590": "GP",
  "599": "CW",
};

/** Common names that are no ISO code: "UK" for GB. */
const ALIASES: Record<string, CountryCode> = { UK: "GB", EL: "GR" };

const NAME_LOCALES = ["en", "de", "es", "fr"] as const;

let names: Map<string, CountryCode> | undefined;
let byCallingCode: Map<string, CountryCode> | undefined;

/** Country names in English, German, Spanish and French (Intl.DisplayNames), made on first use. */
function countryNames(): Map<string, CountryCode> {
  if (names) return names;
  names = new Map();
  const countries = getCountries();
  for (const locale of NAME_LOCALES) {
    const display = new Intl.DisplayNames([locale], { type: "region", fallback: "none" });
    for (const c of countries) {
      const name = display.of(c);
      if (name && !names.has(consentWord(name))) names.set(consentWord(name), c);
    }
  }
  // What exports write beside the official names.
  for (const [name, c] of [
    ["usa", "US"],
    ["united states of america", "US"],
    ["england", "GB"],
    ["great britain", "GB"],
    ["holland", "NL"],
  ] as const)
    names.set(name, c);
  return names;
}

function callingCodes(): Map<string, CountryCode> {
  if (byCallingCode) return byCallingCode;
  byCallingCode = new Map();
  for (const c of getCountries()) {
    const code = getCountryCallingCode(c);
    if (!byCallingCode.has(code)) byCallingCode.set(code, c);
  }
  for (const [code, c] of Object.entries(MAIN_COUNTRY)) byCallingCode.set(code, c);
  return byCallingCode;
}

/**
 * The country a cell names, as an ISO 3166 alpha-2 code libphonenumber knows:
 * a code (`DE`, `de`, `UK`), a name in English, German, Spanish or French
 * (`Germany`, `Deutschland`, `Alemania`, `Allemagne`), or a calling code
 * (`+49`, `49`, `0049`). undefined for an empty or unknown cell.
 */
export function countryOf(cell: string): CountryCode | undefined {
  const t = cell.trim();
  if (t === "") return undefined;
  const upper = t.toUpperCase();
  if (upper.length === 2) {
    const code = ALIASES[upper] ?? upper;
    return isSupportedCountry(code) ? (code as CountryCode) : undefined;
  }
  const calling = /^(?:\+|00)?\s*(\d{1,4})$/.exec(t);
  if (calling) return callingCodes().get(calling[1] as string);
  return countryNames().get(consentWord(t));
}

/** countryOf, memoised per distinct cell (a country column holds a few values many times). */
export function countryReader(): (cell: string) => CountryCode | undefined {
  const memo = new Map<string, CountryCode | undefined>();
  return (cell) => {
    if (memo.has(cell)) return memo.get(cell);
    const c = countryOf(cell);
    if (memo.size < 10_000) memo.set(cell, c);
    return c;
  };
}
