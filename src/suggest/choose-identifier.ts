import { isFailure } from "../imports/index.ts";
import { checkPerson } from "../imports/rules/index.ts";
import { countryOfValue } from "./country-values.ts";
import { e164Readers } from "./phone-country.ts";
import { cellValues } from "./value-kinds.ts";

/** The identifier the suggestion chose, with the people and rows each candidate could import. */
export interface IdentifierChoice {
  identifier: string;
  /** Sampled data rows. */
  rows: number;
  /**
   * People each candidate (email, phone, property:<id>) could import: distinct
   * valid values, since the import merges the rows that share one into one person.
   */
  counts: Record<string, number>;
  /** Rows with a valid value, by candidate: more than `counts` where rows share a value. */
  rowCounts: Record<string, number>;
  /** Headers and counts, never a cell. */
  reason: string;
}

export interface IdentifierInput {
  rows: readonly (readonly string[])[];
  headers: readonly string[];
  /** The column of the email field. */
  emailColumn: number | undefined;
  /** The phone columns in the order a phone would be taken from them (mobile, office, home). */
  phoneColumns: readonly number[];
  /** Columns mapped to a unique workspace property, by property id. */
  uniqueProperties: readonly { index: number; propertyId: string }[];
  phoneCountry: string | null;
  /** Index of a per-row country column for national numbers, if one is suggested. */
  phoneCountryColumn: number | undefined;
}

/** As the import reads an email: the first value of the cell, lower-cased, through the contract's check. */
function emailKey(cell: string): string | undefined {
  const first = cellValues(cell)[0]?.toLowerCase();
  return first !== undefined && checkPerson({ email: first }) === undefined ? first : undefined;
}

/** Distinct keys, and the rows that had one. */
function people(keys: readonly (string | undefined)[]): { people: number; rows: number } {
  const found = keys.filter((k): k is string => k !== undefined);
  return { people: new Set(found).size, rows: found.length };
}

/**
 * Chooses the identifier by the data: the candidate (email, phone, a unique
 * property) that the most people in the sample can be imported by. People,
 * not rows: the import merges rows that share an identifier's value into one
 * person, so a column of switchboard numbers shared by many rows reaches
 * fewer people than it has rows. A row's phone is the first of its phone
 * columns holding a number valid under the row's country (its country
 * column, else the default), as E.164. Ties go to email, then phone: the
 * order people expect.
 */
export function chooseIdentifier(input: IdentifierInput): IdentifierChoice | undefined {
  const counts: Record<string, number> = {};
  const rowCounts: Record<string, number> = {};
  const reader = e164Readers();
  const fallback = input.phoneCountry ?? undefined;
  const record = (candidate: string, keys: readonly (string | undefined)[]) => {
    const n = people(keys);
    counts[candidate] = n.people;
    rowCounts[candidate] = n.rows;
  };
  if (input.emailColumn !== undefined) {
    const i = input.emailColumn;
    record(
      "email",
      input.rows.map((r) => emailKey(r[i] ?? "")),
    );
  }
  if (input.phoneColumns.length > 0) {
    record(
      "phone",
      input.rows.map((r) => {
        const own =
          input.phoneCountryColumn === undefined
            ? undefined
            : countryOfValue(r[input.phoneCountryColumn] ?? "");
        const read = reader(own ?? fallback);
        for (const i of input.phoneColumns) {
          for (const v of cellValues(r[i] ?? "")) {
            const e164 = read(v);
            if (!isFailure(e164)) return String(e164);
          }
        }
        return undefined;
      }),
    );
  }
  for (const p of input.uniqueProperties) {
    record(
      `property:${p.propertyId}`,
      input.rows.map((r) => {
        const v = (r[p.index] ?? "").trim();
        return v === "" ? undefined : v;
      }),
    );
  }
  const candidates = Object.keys(counts);
  if (candidates.length === 0) return undefined;
  const best = candidates.reduce((a, b) => ((counts[b] ?? 0) > (counts[a] ?? 0) ? b : a));
  const n = input.rows.length;
  const whom = (c: string) => {
    const p = counts[c] ?? 0;
    const r = rowCounts[c] ?? 0;
    const who = p === 1 ? "1 person" : `${p} people`;
    return p === r ? who : `${who} (${r} rows, some sharing one value)`;
  };
  const describe = (c: string) => {
    if (c === "email") return `${whom(c)} by a valid email ("${input.headers[input.emailColumn as number]}")`;
    if (c === "phone") {
      const cols = input.phoneColumns.map((i) => `"${input.headers[i]}"`).join(", then ");
      return `${whom(c)} by a valid phone number (${cols}${fallback ? `, national numbers read as ${fallback}` : ""})`;
    }
    return `${whom(c)} by the unique ${c}`;
  };
  const others = candidates.filter((c) => c !== best);
  const reason =
    n === 0
      ? `${best}: the file has no data rows to count, so the first of email, phone, unique property mapped`
      : `${best}: the ${n} sampled rows hold ${describe(best)}${others.length > 0 ? `; ${others.map(describe).join("; ")}` : ""}; rows sharing a value are one person`;
  return { identifier: best, rows: n, counts, rowCounts, reason };
}
