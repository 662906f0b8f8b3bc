import { parsePhoneNumberFromString } from "libphonenumber-js";
import { isFailure, toE164 } from "../imports/index.ts";
import { countryOfEmail, countryOfValue } from "./country-values.ts";
import { LANGUAGE_COUNTRY, type Language } from "./header-words.ts";
import { cellValues, filledValues } from "./value-kinds.ts";

/** What the suggestion says of phone numbers' country, and why. */
export interface PhoneCountryChoice {
  /** The default country (job key phoneCountry), null when nothing says one. */
  country: string | null;
  /** A column of per-row countries worth reading (job key phoneCountryColumn), null when the default does as well. */
  column: string | null;
  /** Which signal decided: the option given, the file's own numbers, a country column, the emails, the headers. */
  from: "option" | "numbers" | "country column" | "email domains" | "headers" | "none";
  /** Counts and headers only, never a cell. */
  reason: string;
}

export interface PhoneCountryInput {
  rows: readonly (readonly string[])[];
  /** Indexes of the columns mapped to phone or additionalPhones. */
  phoneColumns: readonly number[];
  emailColumns: readonly number[];
  /** Columns whose header names a country, by index and header. */
  countryColumns: readonly { index: number; header: string }[];
  /** The languages the file's headers were read in, one per header that has one. */
  headerLanguages: readonly Language[];
  /** --phone-country: wins over everything, and is only checked against the numbers. */
  given?: string | undefined;
}

/** How much each signal counts, strongest first: a number's own +code cannot be wrong about itself. */
const WEIGHTS = { numbers: 4, "country column": 3, "email domains": 2, headers: 1 } as const;
type Signal = keyof typeof WEIGHTS;

/** English headers are written in many countries: two weak candidates, told apart by the numbers. */
const ENGLISH_COUNTRIES = ["US", "GB"];

interface Vote {
  signal: Signal;
  country: string;
  /** Share of the signal's evidence that names this country, 0 to 1. */
  share: number;
  words: string;
}

function tally<T extends string = string>(
  values: Iterable<T | undefined>,
): { counts: Map<string, number>; total: number } {
  const counts = new Map<string, number>();
  let total = 0;
  for (const v of values) {
    total++;
    if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return { counts, total };
}

const NAME = new Intl.DisplayNames(["en"], { type: "region" });
const nameOf = (code: string) => NAME.of(code) ?? code;

/** A sampled number written without + (or 00), with the row it is on. */
interface National {
  row: number;
  value: string;
}

function phonesOf(input: PhoneCountryInput): { international: string[]; national: National[] } {
  const international: string[] = [];
  const national: National[] = [];
  input.rows.forEach((cells, row) => {
    for (const i of input.phoneColumns) {
      for (const v of cellValues(cells[i] ?? "")) {
        if (v.startsWith("+")) international.push(v);
        else if (v.startsWith("00")) international.push(`+${v.slice(2)}`);
        else national.push({ row, value: v });
      }
    }
  });
  return { international, national };
}

/**
 * The share of the sampled numbers written with + from which they count in
 * full: fewer say less about the numbers written without (two foreign
 * clients' +52 numbers in 200 rows of national ones do not make the file
 * Mexican), so below it their vote shrinks in proportion.
 */
const FULL_NUMBERS_SHARE = 0.25;

/**
 * The national numbers a default country would read: those of rows whose
 * country columns name no other country (a row that names its own country is
 * read in it when the column is suggested, and says nothing of the default).
 */
function readByDefault(input: PhoneCountryInput, national: readonly National[], country: string): National[] {
  if (input.countryColumns.length === 0) return [...national];
  return national.filter((n) =>
    input.countryColumns.every((col) => {
      const named = countryOfValue(input.rows[n.row]?.[col.index] ?? "");
      return named === undefined || named === country;
    }),
  );
}

/** toE164 by country, each reader built once: a sample reads many numbers under few countries. */
export function e164Readers(): (country: string | undefined) => ReturnType<typeof toE164> {
  const readers = new Map<string | undefined, ReturnType<typeof toE164>>();
  return (country) => {
    let read = readers.get(country);
    if (!read) {
      read = toE164(country);
      readers.set(country, read);
    }
    return read;
  };
}

function validShare(numbers: readonly National[], country: string | undefined): number {
  if (numbers.length === 0) return 1;
  const read = toE164(country);
  return numbers.filter((n) => !isFailure(read(n.value))).length / numbers.length;
}

function votesOf(input: PhoneCountryInput, international: readonly string[], nationals: number): Vote[] {
  const votes: Vote[] = [];
  const byNumber = tally(international.map((n) => parsePhoneNumberFromString(n)?.country));
  const written = byNumber.total / (byNumber.total + nationals);
  const coverage = Math.min(1, written / FULL_NUMBERS_SHARE);
  for (const [country, n] of byNumber.counts) {
    votes.push({
      signal: "numbers",
      country,
      share: (n / byNumber.total) * coverage,
      words:
        `${n} of the ${byNumber.total} sampled numbers written with + are ${nameOf(country)} (${country})` +
        (coverage < 1
          ? `, but only ${byNumber.total} of ${byNumber.total + nationals} numbers are written with +, so they count ${Math.round(coverage * 100)}%`
          : ""),
    });
  }
  for (const col of input.countryColumns) {
    const t = tally(
      input.rows
        .flatMap((r) => ((r[col.index] ?? "").trim() === "" ? [] : [r[col.index] ?? ""]))
        .map(countryOfValue),
    );
    // The country the column names most, ahead of every other: a column of many countries says
    // each row's own (phoneCountryColumn), and of the file only where most of its people are.
    const [first, second] = [...t.counts].sort((a, b) => b[1] - a[1]);
    if (!first || (second && second[1] === first[1])) continue;
    const [country, n] = first;
    votes.push({
      signal: "country column",
      country,
      share: n / t.total,
      words: `"${col.header}" names ${country} in ${n} of ${t.total} sampled rows${second ? `, more than any other country` : ""}`,
    });
  }
  const emails = input.rows.flatMap((r) => input.emailColumns.flatMap((i) => cellValues(r[i] ?? "")));
  const byDomain = tally(emails.map(countryOfEmail));
  for (const [country, n] of byDomain.counts) {
    votes.push({
      signal: "email domains",
      country,
      share: n / byDomain.total,
      words: `${n} of ${byDomain.total} sampled emails are at .${country === "GB" ? "uk" : country.toLowerCase()} domains`,
    });
  }
  const langs = tally<string>(input.headerLanguages);
  for (const [lang, n] of langs.counts) {
    const countries =
      lang === "en" ? ENGLISH_COUNTRIES : [LANGUAGE_COUNTRY[lang as Language]].filter((c) => c !== undefined);
    for (const country of countries) {
      votes.push({
        signal: "headers",
        country,
        share: (n / langs.total) * (lang === "en" ? 0.5 : 1),
        words: `${n} of ${langs.total} recognised headers are ${lang === "en" ? "English" : { de: "German", fr: "French", es: "Spanish" }[lang]}`,
      });
    }
  }
  return votes;
}

/**
 * The per-row country column worth suggesting: one that names several
 * countries, whose values are nearly all read as countries, and under which
 * more sampled national numbers are valid than under the default alone.
 */
function countryColumnOf(
  input: PhoneCountryInput,
  national: readonly National[],
  fallback: string | null,
): { header: string; valid: number; defaultValid: number; differs: number; codes: boolean } | undefined {
  if (national.length === 0) return undefined;
  const reader = e164Readers();
  let best:
    | { header: string; valid: number; defaultValid: number; differs: number; codes: boolean }
    | undefined;
  for (const col of input.countryColumns) {
    const filled = filledValues(input.rows.map((r) => r[col.index] ?? ""));
    const read = filled.map(countryOfValue);
    if (filled.length === 0 || read.filter(Boolean).length / filled.length < 0.8) continue;
    if (new Set(read.filter(Boolean)).size < 2) continue;
    let valid = 0;
    let defaultValid = 0;
    let differs = 0;
    for (const row of input.rows) {
      const own = countryOfValue(row[col.index] ?? "") ?? fallback ?? undefined;
      for (const i of input.phoneColumns) {
        for (const v of cellValues(row[i] ?? "")) {
          if (v.startsWith("+") || v.startsWith("00")) continue;
          const mine = reader(own)(v);
          const theirs = reader(fallback ?? undefined)(v);
          if (!isFailure(mine)) valid++;
          if (!isFailure(theirs)) defaultValid++;
          // Some plans (Germany's) take almost any digits: a number valid both ways may still be another one.
          if (!isFailure(mine) && (isFailure(theirs) || mine !== theirs)) differs++;
        }
      }
    }
    // Of two columns as good (Shopify's Country and Country Code), the codes: every reader of countries reads those.
    const codes = filled.every((v) => /^[A-Za-z]{2}$/.test(v));
    if (
      valid >= defaultValid &&
      differs > 0 &&
      (!best || valid > best.valid || (valid === best.valid && codes && !best.codes))
    )
      best = { header: col.header, valid, defaultValid, differs, codes };
  }
  return best;
}

/**
 * Infers the default country of phone numbers written without +: each
 * signal votes for countries with a weight (the file's own +numbers 4, less
 * when they are under a quarter of the sampled numbers; a country column 3
 * for the country it names most; the emails' country domains 2; the headers'
 * language 1) times its share; a country under which fewer than half the
 * national numbers it would read are valid cannot win (a row whose country
 * column names another country is not its to read). A country column naming several
 * countries is suggested as phoneCountryColumn when it makes more of the
 * national numbers valid than the default does.
 *
 * @example
 * inferPhoneCountry({ rows: [["0151 5550211"]], phoneColumns: [0], emailColumns: [], countryColumns: [], headerLanguages: ["de"] }).country === "DE"
 */
export function inferPhoneCountry(input: PhoneCountryInput): PhoneCountryChoice {
  const { international, national } = phonesOf(input);
  if (input.given) {
    const share = validShare(national, input.given);
    const column = countryColumnOf(input, national, input.given);
    return {
      country: input.given.toUpperCase(),
      column: column?.header ?? null,
      from: "option",
      reason:
        `given by --phone-country` +
        (national.length > 0
          ? `; ${Math.round(share * national.length)} of ${national.length} sampled numbers without + are valid in it`
          : ""),
    };
  }
  const votes = votesOf(input, international, national.length);
  const scores = new Map<string, { score: number; votes: Vote[] }>();
  for (const v of votes) {
    const s = scores.get(v.country) ?? { score: 0, votes: [] };
    s.score += WEIGHTS[v.signal] * v.share;
    s.votes.push(v);
    scores.set(v.country, s);
  }
  const ranked = [...scores.entries()]
    .map(([country, s]) => {
      // Valid among all the national numbers, or among those of rows naming this country or none,
      // whichever is more: a file of many countries' numbers is judged by the numbers the default reads.
      const all = { read: national.length, valid: validShare(national, country) };
      const own = readByDefault(input, national, country);
      const mine = { read: own.length, valid: validShare(own, country) };
      return { country, ...s, ...(own.length > 0 && mine.valid > all.valid ? mine : all) };
    })
    .filter((c) => c.read === 0 || c.valid >= 0.5)
    .sort((a, b) => b.score - a.score || b.valid - a.valid || a.country.localeCompare(b.country));
  const [top, next] = ranked;
  // English headers alone say US as much as GB: a tie nothing breaks chooses nothing.
  const tied = top && next && top.score === next.score && top.valid === next.valid;
  const winner = tied ? undefined : top;
  const column = countryColumnOf(input, national, winner?.country ?? null);
  if (!winner && tied) {
    return {
      country: null,
      column: column?.header ?? null,
      from: column ? "country column" : "none",
      reason: `${top.country} and ${next.country} are as likely (${top.votes.map((v) => v.words).join("; ")}); set phoneCountry if the numbers are national`,
    };
  }
  if (!winner) {
    const said = [...new Set(votes.map((v) => v.country))];
    return {
      country: null,
      column: column?.header ?? null,
      from: column ? "country column" : "none",
      reason:
        said.length === 0
          ? "nothing in the file names a country: no number with +, no country column, no country domain, no header language that says one; set phoneCountry if the numbers are national"
          : `the file points to ${said.join(", ")}, but under none of them are half of the ${national.length} sampled numbers without + valid; set phoneCountry by hand`,
    };
  }
  const strongest = [...winner.votes].sort(
    (a, b) => WEIGHTS[b.signal] * b.share - WEIGHTS[a.signal] * a.share,
  );
  const first = strongest[0] as Vote;
  const others = ranked.slice(1, 3).map((r) => `${r.country} ${r.score.toFixed(1)}`);
  const parts = [
    `${winner.country} (score ${winner.score.toFixed(1)}${others.length > 0 ? `; then ${others.join(", ")}` : ""})`,
    strongest.map((v) => v.words).join("; "),
  ];
  if (winner.read > 0) {
    const ownRows = winner.read < national.length ? ` (of rows naming ${winner.country} or no country)` : "";
    parts.push(
      `${Math.round(winner.valid * winner.read)} of ${winner.read} sampled numbers without +${ownRows} are valid in ${winner.country}`,
    );
  }
  if (column) {
    parts.push(
      `"${column.header}" gives each row its own country: ${column.valid} national numbers valid (${column.defaultValid} with ${winner.country} alone), ${column.differs} of them read as another number than with ${winner.country}`,
    );
  }
  return {
    country: winner.country,
    column: column?.header ?? null,
    from: first.signal,
    reason: parts.join("; "),
  };
}
