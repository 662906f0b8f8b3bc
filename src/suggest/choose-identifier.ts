import { isFailure, toE164 } from "../imports/index.ts";
import { checkPerson } from "../imports/map-row.ts";
import { countryOfValue } from "./country-values.ts";
import { cellValues } from "./value-kinds.ts";

/** The identifier the suggestion chose, with the sampled rows each candidate could import. */
export interface IdentifierChoice {
  identifier: string;
  /** Sampled data rows. */
  rows: number;
  /** Rows with a valid value, by candidate (email, phone, property:<id>). */
  counts: Record<string, number>;
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
function validEmail(cell: string): boolean {
  const first = cellValues(cell)[0];
  return first !== undefined && checkPerson({ email: first.toLowerCase() }) === undefined;
}

/**
 * Chooses the identifier by the data: the candidate (email, phone, a unique
 * property) that the most sampled rows hold a valid value of, so the most
 * people can be imported. A row counts for phone when any of its phone
 * columns holds a number valid under the row's country (its country column,
 * else the default). Ties go to email, then phone: the order people expect.
 */
export function chooseIdentifier(input: IdentifierInput): IdentifierChoice | undefined {
  const counts: Record<string, number> = {};
  const readers = new Map<string | undefined, ReturnType<typeof toE164>>();
  const reader = (c: string | undefined) => {
    let r = readers.get(c);
    if (!r) {
      r = toE164(c);
      readers.set(c, r);
    }
    return r;
  };
  const fallback = input.phoneCountry ?? undefined;
  if (input.emailColumn !== undefined) {
    const i = input.emailColumn;
    counts.email = input.rows.filter((r) => validEmail(r[i] ?? "")).length;
  }
  if (input.phoneColumns.length > 0) {
    counts.phone = input.rows.filter((r) => {
      const own =
        input.phoneCountryColumn === undefined
          ? undefined
          : countryOfValue(r[input.phoneCountryColumn] ?? "");
      const read = reader(own ?? fallback);
      return input.phoneColumns.some((i) => cellValues(r[i] ?? "").some((v) => !isFailure(read(v))));
    }).length;
  }
  for (const p of input.uniqueProperties) {
    counts[`property:${p.propertyId}`] = input.rows.filter((r) => (r[p.index] ?? "").trim() !== "").length;
  }
  const candidates = Object.keys(counts);
  if (candidates.length === 0) return undefined;
  const best = candidates.reduce((a, b) => ((counts[b] ?? 0) > (counts[a] ?? 0) ? b : a));
  const n = input.rows.length;
  const describe = (c: string) => {
    if (c === "email")
      return `${counts.email} have a valid email ("${input.headers[input.emailColumn as number]}")`;
    if (c === "phone") {
      const cols = input.phoneColumns.map((i) => `"${input.headers[i]}"`).join(", then ");
      return `${counts.phone} a valid phone number (${cols}${fallback ? `, national numbers read as ${fallback}` : ""})`;
    }
    return `${counts[c]} a value of the unique ${c}`;
  };
  const others = candidates.filter((c) => c !== best);
  const reason =
    n === 0
      ? `${best}: the file has no data rows to count, so the first of email, phone, unique property mapped`
      : `${best}: of ${n} sampled rows ${describe(best)}${others.length > 0 ? `; ${others.map(describe).join("; ")}` : ""}`;
  return { identifier: best, rows: n, counts, reason };
}
