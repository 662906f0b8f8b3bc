import path from "node:path";
import type { PersonProperty } from "../api/index.ts";
import {
  ImportJobDefinition,
  type ImportJobDefinitionInput,
  type PersonField,
  type PresetName,
  type Transform,
} from "../config/import-job.ts";
import { problemsOf } from "../errors/problems.ts";
import { looksLikeDataRow, normalizeHeader } from "../imports/index.ts";
import { chooseIdentifier, type IdentifierChoice } from "./choose-identifier.ts";
import {
  type ConsentPolarity,
  consentNote,
  consentTransform,
  holdsSubscriptionStatus,
  readConsentValues,
} from "./consent.ts";
import { dateTransformFor } from "./date-formats.ts";
import { foldAccents } from "./fold-accents.ts";
import { type HeaderReading, headerKey, readHeader } from "./header-match.ts";
import {
  COUNTRY_HEADER_WORDS,
  COUNTRY_HEADERS,
  FIRST_NAME_BESIDE_LAST,
  type HeaderKind,
  type Language,
  SURNAME_BESIDE_FIRST,
} from "./header-words.ts";
import { inferPhoneCountry, type PhoneCountryChoice } from "./phone-country.ts";
import { detectPreset, presetColumns } from "./preset-match.ts";
import { readRepeatedHeaders } from "./repeated-headers.ts";
import { sampleOutcome } from "./sample-outcome.ts";
import type { ColumnSuggestion, MappingSuggestion } from "./suggestion.ts";
import { valueShares } from "./value-kinds.ts";

/** The study a suggestion imports into until a person names it. */
export const STUDY_PLACEHOLDER = "CHANGE-ME";

export interface SuggestOptions {
  /** The job's name: lower-case letters, digits and dashes. */
  name: string;
  /** Default STUDY_PLACEHOLDER. */
  studyId?: string | undefined;
  phoneCountry?: string | undefined;
  /** The workspace's person properties, to map the columns left over by their names. */
  properties?: readonly PersonProperty[] | undefined;
  /** The file's name, for the description (its folder is left out). */
  fileName?: string | undefined;
}

/** A column while the steps work on it. */
interface Draft extends ColumnSuggestion {
  reading: HeaderReading;
  values: string[];
}

/** The kinds that compete for one field, strongest reading first. */
interface Candidate {
  draft: Draft;
  kind: HeaderKind;
  rank: number;
  confidence: number;
  why: "header" | "values";
  note: string;
}

const KIND_WORDS: Record<HeaderKind, string> = {
  email: "an email address",
  "email-other": "another email address (a second, home or work one)",
  phone: "a phone number",
  "phone-other": "another phone number (a mobile, home or second one)",
  firstName: "a first name",
  lastName: "a last name",
  lastContactDate: "the date of the last contact",
  optedOut: "an opt-out",
  consent: "a consent (its yes is no opt-out)",
  subscription: "a subscription status",
};

/** A column whose header says nothing, mapped by most of its sampled values: the first kind that fits. */
const BY_VALUES = [
  { kind: "email", base: 0.6, words: "email addresses" },
  { kind: "phone", base: 0.55, words: "phone numbers" },
] as const;

function pct(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** Step 1: the columns a preset maps, when the headers name a CRM's export. */
function applyPreset(drafts: Draft[], headers: readonly string[]): PresetName | null {
  const preset = detectPreset(headers);
  if (!preset) return null;
  for (const { index, rule } of presetColumns(preset, headers)) {
    const d = drafts[index] as Draft;
    Object.assign(d, {
      to: rule.to,
      transforms: [...rule.transforms],
      confidence: 0.95,
      why: "preset",
      note: `the ${preset} preset maps this header`,
    });
  }
  return preset;
}

/** Step 2 and 3: what the header, else the values, say each open column is. */
function candidatesOf(drafts: readonly Draft[]): Candidate[] {
  const out: Candidate[] = [];
  for (const d of drafts) {
    if (d.to !== null) continue;
    const r = d.reading;
    const shares = valueShares(d.values);
    if ("kind" in r) {
      const emailish = r.kind === "email" || r.kind === "email-other";
      const phoneish = r.kind === "phone" || r.kind === "phone-other";
      const share = emailish ? shares.email : phoneish ? shares.phone : 1;
      // A longer header that names an email or phone must hold them: "E-mail 1 - Type" holds "Home".
      if (r.level === "contains" && (emailish || phoneish) && shares.filled > 0 && share < 0.5) continue;
      const base = r.level === "exact" ? 0.85 : 0.7;
      const confidence = emailish || phoneish ? base + (shares.filled > 0 ? 0.1 * share : 0) : base + 0.05;
      const lang = "language" in r && r.language && r.language !== "en" ? ` (${r.language})` : "";
      out.push({
        draft: d,
        kind: r.kind,
        rank: r.level === "exact" ? 0 : 1,
        confidence,
        why: "header",
        note: `the header ${r.level === "exact" ? "is" : "names"} ${KIND_WORDS[r.kind]}${lang}`,
      });
    } else if (
      ("unknown" in r || ("notPerson" in r && r.notPerson === "status")) &&
      holdsSubscriptionStatus(d.values)
    ) {
      out.push({
        draft: d,
        kind: "subscription",
        rank: 2,
        confidence: 0.8,
        why: "values",
        note: "its sampled values are subscription statuses (subscribed, unsubscribed…)",
      });
    } else if ("unknown" in r && shares.filled > 0) {
      const found = BY_VALUES.find((v) => shares[v.kind] >= 0.8);
      if (found) {
        out.push({
          draft: d,
          kind: found.kind,
          rank: 2,
          confidence: found.base + 0.3 * shares[found.kind],
          why: "values",
          note: `${pct(shares[found.kind])} of the ${shares.filled} sampled values are ${found.words}`,
        });
      }
    }
  }
  return out;
}

function splitTransform(values: readonly string[]): Transform {
  return values.some((v) => v.includes(";")) || !values.some((v) => v.includes(","))
    ? "split"
    : { split: "," };
}

const FIELD_OF: Record<HeaderKind, PersonField> = {
  email: "email",
  "email-other": "email",
  phone: "phone",
  "phone-other": "phone",
  firstName: "firstName",
  lastName: "lastName",
  lastContactDate: "lastContactDate",
  optedOut: "isOptedOut",
  consent: "isOptedOut",
  subscription: "isOptedOut",
};

const POLARITY: Partial<Record<HeaderKind, ConsentPolarity>> = {
  optedOut: "opt-out",
  consent: "consent",
  subscription: "subscription",
};

const FAMILY_ORDER: Partial<Record<HeaderKind, number>> = {
  email: 0,
  phone: 0,
  "email-other": 1,
  "phone-other": 1,
};

/**
 * Step 4: the fields handed out. The strongest email column is the email and
 * every other one an additional email; the same for phones. A scalar field
 * goes to its strongest column only.
 */
function assignFields(candidates: Candidate[], drafts: readonly Draft[], dayFirst: boolean): void {
  const order = (c: Candidate) => (FAMILY_ORDER[c.kind] ?? 0) * 10 + c.rank;
  const sorted = [...candidates].sort((a, b) => order(a) - order(b) || a.draft.index - b.draft.index);
  const holder = new Map<PersonField | "fullName", Draft>();
  for (const d of drafts) if (typeof d.to === "string") holder.set(d.to, d);
  for (const c of sorted) {
    const d = c.draft;
    let field = FIELD_OF[c.kind];
    const list = field === "email" ? "additionalEmails" : field === "phone" ? "additionalPhones" : undefined;
    if (holder.has(field) && list) field = list;
    else if (list && (c.kind === "email-other" || c.kind === "phone-other"))
      c.note += `, and no column is the main ${field}`;
    const taken = holder.get(field);
    if (taken && !list) {
      d.note = `${c.note}, but ${field} is filled by "${taken.column}"`;
      d.confidence = 0.5;
      continue;
    }
    let transforms: Transform[] | undefined;
    let confidence = c.confidence;
    const filled = d.values.filter((v) => v.trim() !== "");
    if (field === "email") transforms = ["lowercase"];
    else if (field === "additionalEmails") transforms = [splitTransform(filled), "lowercase"];
    else if (field === "phone") transforms = ["phone"];
    else if (field === "additionalPhones") transforms = [splitTransform(filled), "phone"];
    else if (field === "lastContactDate") transforms = [dateTransformFor(filled, dayFirst)];
    else if (field === "isOptedOut") {
      const polarity = POLARITY[c.kind] as ConsentPolarity;
      const read = readConsentValues(filled, polarity);
      if (read.filled > 0 && read.optedOut + read.notOptedOut === 0) {
        d.note = `${c.note}, but none of its ${read.filled} sampled values says whether the person consents${
          read.neutralWords.length > 0 ? ` (${read.neutralWords.join(", ")})` : ""
        }`;
        d.confidence = 0.6;
        continue;
      }
      transforms = [consentTransform(polarity)];
      c.note += consentNote(polarity, read);
      if (read.filled > 0 && read.neither / read.filled > 0.2) confidence = Math.min(confidence, 0.6);
    } else transforms = [];
    Object.assign(d, { to: field, transforms, confidence, why: c.why, note: c.note });
    if (!LIST.has(field)) holder.set(field, d);
  }
}

const LIST = new Set<PersonField>(["additionalEmails", "additionalPhones"]);

/** Step 5: a full-name header beside a first (or last) name column is the other half: "Vorname, Name". */
function resolveNameHalves(drafts: readonly Draft[]): void {
  const has = (f: PersonField) => drafts.some((d) => d.to === f);
  for (const d of drafts) {
    const r = d.reading;
    if (d.to !== null || !("fullName" in r)) continue;
    if (SURNAME_BESIDE_FIRST.has(r.key) && has("firstName") && !has("lastName")) {
      Object.assign(d, {
        to: "lastName",
        transforms: [],
        confidence: 0.75,
        why: "header",
        note: "a name beside a first-name column is the last name",
      });
    } else if (FIRST_NAME_BESIDE_LAST.has(r.key) && has("lastName") && !has("firstName")) {
      Object.assign(d, {
        to: "firstName",
        transforms: [],
        confidence: 0.75,
        why: "header",
        note: "a name beside a last-name column is the first name",
      });
    }
  }
}

/** The words a header may start with and still be the person's email when the file has no other: "Account_Email". */
const ACCOUNT_PREFIXES = new Set(["account", "company"]);

/**
 * Step 5c: with no email column at all, an `Account_Email` or `Company
 * Email` column of email addresses is the person's. In a Salesforce person
 * account (a Data Loader extract of a shop's customers) the "account" is the
 * person; a file with only a company's addresses gets them as the people's,
 * which the lower confidence and the note ask a person to check.
 */
function mapAccountEmail(drafts: readonly Draft[]): void {
  if (drafts.some((d) => d.to === "email" || d.to === "additionalEmails")) return;
  for (const d of drafts) {
    if (d.to !== null || d.occurrence !== undefined || !("notPerson" in d.reading)) continue;
    const words = headerKey(d.column).split(" ");
    if (!ACCOUNT_PREFIXES.has(words[0] ?? "") || !words.slice(1).includes("email")) continue;
    const shares = valueShares(d.values);
    if (shares.filled === 0 || shares.email < 0.8) continue;
    Object.assign(d, {
      to: "email",
      transforms: ["lowercase"],
      confidence: 0.6,
      why: "values",
      note: `no other column holds an email, and ${pct(shares.email)} of the ${shares.filled} sampled values are email addresses: in a Salesforce person account (or a file of customers) the "${words[0]}" is the person; check it is not their organisation's address`,
    });
    return;
  }
}

/** Step 6: a column left over whose header is the name of a workspace property. */
function matchProperties(drafts: readonly Draft[], properties: readonly PersonProperty[]): void {
  const byName = new Map<string, PersonProperty[]>();
  for (const p of properties) {
    const key = normalizeHeader(p.name);
    byName.set(key, [...(byName.get(key) ?? []), p]);
  }
  for (const d of drafts) {
    if (d.to !== null) continue;
    const found = byName.get(normalizeHeader(d.column));
    const p = found?.length === 1 ? found[0] : undefined;
    if (p === undefined) continue;
    Object.assign(d, {
      to: { propertyId: p.propertyId },
      transforms: [],
      confidence: 0.85,
      why: "property",
      note: `the header is the name of the workspace property "${p.name}" (${p.propertyId})`,
    });
  }
}

function noneNote(r: HeaderReading): { note: string; confidence: number } {
  if ("notPerson" in r) return { note: `"${r.notPerson}" is not a person field`, confidence: 0.9 };
  if ("fullName" in r)
    return { note: "a full name: the service keeps first and last names apart", confidence: 0.8 };
  return { note: "neither its header nor its values say which person field it is", confidence: 0.5 };
}

/** A job name from a file name: "HubSpot Export (2).csv" → "hubspot-export-2". */
export function jobNameOf(file: string): string {
  const base = path.basename(file, path.extname(file));
  const name = normalizeHeaderWords(base);
  return name === "" ? "suggested-import" : name;
}

function normalizeHeaderWords(s: string): string {
  return foldAccents(s)
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/**
 * The columns of the sample: the header's, without trailing columns that
 * have neither a header nor a value (a trailing delimiter on every row, as
 * Outlook CSV from Google writes it), which the import reads as absent too.
 */
function widthOf(records: readonly (readonly string[])[], header: boolean): number {
  let width = Math.max(0, ...records.map((r) => r.length));
  const first = records[0] ?? [];
  const emptyColumn = (i: number) =>
    (!header || (first[i] ?? "").trim() === "") &&
    records.every((r, k) => (header && k === 0) || (r[i] ?? "").trim() === "");
  while (width > 1 && emptyColumn(width - 1)) width--;
  return width;
}

/** How a phone column ranks as the person's phone: a mobile first, then an office or plain one, then home, then others. */
function phoneRank(header: string): number {
  const words = headerKey(header).split(" ");
  const has = (list: readonly string[]) => words.some((w) => list.includes(w));
  if (
    has([
      "mobile",
      "mobil",
      "cell",
      "cellphone",
      "handy",
      "mobiltelefon",
      "handynummer",
      "movil",
      "celular",
      "portable",
    ])
  )
    return 0;
  if (has(["home", "privat", "private", "personal", "casa", "domicile", "particulier"])) return 2;
  if (has(["other", "2", "3", "4", "weitere", "autre", "otro"])) return 3;
  return 1;
}

/** Step 5b: a full-name column ("Name", "Nombre completo") when no column holds first or last names. */
function mapFullName(drafts: readonly Draft[]): void {
  if (drafts.some((d) => d.to === "firstName" || d.to === "lastName")) return;
  const d = drafts.find((x) => x.to === null && "fullName" in x.reading);
  if (!d) return;
  Object.assign(d, {
    to: "fullName",
    transforms: [],
    confidence: 0.8,
    why: "header",
    note: 'a full name, and no column holds first or last names: the import splits it ("Last, First" included)',
  });
}

function isCountryHeader(header: string): boolean {
  const key = headerKey(header);
  return COUNTRY_HEADERS.has(key) || key.split(" ").some((w) => COUNTRY_HEADER_WORDS.has(w));
}

/**
 * Step 8: with phone the identifier, every phone column feeds the phone, in
 * the order mobile, office, home, other: the first of them with a value is
 * the phone, the others additional phones (several columns `to: phone`, in
 * that order). Only when a sampled row has its first phone column empty and
 * another filled: otherwise phone and additionalPhones say the same.
 */
function combinePhones(drafts: Draft[]): Draft[] | undefined {
  const phones = drafts
    .filter((d) => d.to === "phone" || d.to === "additionalPhones")
    .sort((a, b) => phoneRank(a.column) - phoneRank(b.column) || a.index - b.index);
  if (phones.length < 2) return undefined;
  const [first, ...rest] = phones as [Draft, ...Draft[]];
  const rows = first.values.length;
  let gains = false;
  for (let k = 0; k < rows && !gains; k++) {
    gains = (first.values[k] ?? "").trim() === "" && rest.some((d) => (d.values[k] ?? "").trim() !== "");
  }
  if (!gains) return undefined;
  phones.forEach((d, n) => {
    Object.assign(d, {
      to: "phone",
      transforms: ["phone"],
      note:
        n === 0
          ? `${d.note}; the first of ${phones.length} phone columns: the phone when it has one`
          : `${d.note}; phone column ${n + 1} of ${phones.length}: the phone when the ones before it are empty, else an additional phone`,
    });
  });
  return phones;
}

/** Step 10: the preset is named only when the import can use it on this file: it names columns by header, so none may repeat. */
function usablePreset(preset: PresetName | null, headers: readonly string[]): PresetName | null {
  if (!preset) return null;
  const keys = headers.map(normalizeHeader);
  return keys.some((k, i) => keys.indexOf(k) !== i) ? null : preset;
}

/**
 * Suggests how a file's columns map onto a person: a CRM's preset first,
 * then headers as CRMs, spreadsheets and form tools write them (English,
 * German, French, Spanish), then what the values look like, then the
 * workspace's properties by name. Then, from the sampled values: the
 * phones' default country, the identifier most rows can be imported by, and
 * what importing the sample would do. `records` are the file's first
 * records, header row included when it has one.
 *
 * @example
 * const s = suggestMapping([["E-Mail", "Vorname", "Firma"], ["a@example.org", "Ann", "Acme"]], { name: "contacts" });
 * s.columns.map((c) => c.to); // ["email", "firstName", null]
 */
export function suggestMapping(
  records: readonly (readonly string[])[],
  options: SuggestOptions,
): MappingSuggestion {
  const first = records[0] ?? [];
  const header = !looksLikeDataRow(first);
  const width = widthOf(records, header);
  const headers = Array.from({ length: width }, (_v, i) => {
    const h = header ? (first[i] ?? "").trim() : "";
    return h === "" ? `column${i + 1}` : h;
  });
  const rows = header ? records.slice(1) : records;
  const readings: HeaderReading[] = headers.map((h) => (header ? readHeader(h) : { unknown: true }));
  const repeated = readRepeatedHeaders(headers, readings, headers.map(headerKey));

  const drafts: Draft[] = headers.map((column, index) => {
    const occurrence = repeated.occurrence[index];
    return {
      index,
      column,
      ...(occurrence !== undefined ? { occurrence } : {}),
      to: null,
      transforms: [],
      confidence: 0,
      why: "none",
      note: "",
      reading: readings[index] as HeaderReading,
      values: rows.map((r) => r[index] ?? ""),
    };
  });

  const detected = header ? applyPreset(drafts, headers) : null;
  // A repeated header among the organisation's columns (the company's Phone Number) is no person field.
  const organisation = new Set(drafts.filter((d) => repeated.organisation[d.index]).map((d) => d.index));
  const open = drafts.filter((d) => !organisation.has(d.index));
  const languages = open.flatMap((d) =>
    "language" in d.reading && d.reading.language ? [d.reading.language] : [],
  );
  const dayFirst = languages.filter((l) => l !== "en").length > languages.filter((l) => l === "en").length;
  assignFields(candidatesOf(open), drafts, dayFirst);
  resolveNameHalves(open);
  mapFullName(open);
  mapAccountEmail(open);
  matchProperties(open, options.properties ?? []);
  for (const d of drafts) {
    if (d.to !== null) continue;
    d.why = "none";
    d.transforms = [];
    // A column whose field a stronger column took keeps the note that says so.
    if (d.note !== "") continue;
    const none = organisation.has(d.index)
      ? {
          note: `the header repeats, and this one (occurrence ${d.occurrence}) is among the organisation's columns: the person's is column ${(repeated.personColumn.get(normalizeHeader(d.column)) ?? 0) + 1}`,
          confidence: 0.85,
        }
      : noneNote(d.reading);
    d.note = none.note;
    d.confidence = none.confidence;
  }

  const phoneCountry = inferCountry(drafts, rows, languages, options);
  const choice = pickIdentifier(drafts, rows, headers, phoneCountry, options.properties ?? []);
  if (choice?.identifier === "phone") combinePhones(drafts);
  const preset = usablePreset(detected, headers);
  if (detected && !preset) {
    for (const d of drafts)
      if (d.why === "preset")
        d.note += `; the ${detected} preset itself is left out, as a header of the file repeats`;
  }

  const columns: ColumnSuggestion[] = drafts.map(({ reading: _r, values: _v, ...c }) => c);
  const built = buildDefinition(columns, {
    header,
    preset,
    options,
    phoneCountry,
    identifier: choice?.identifier,
  });
  let outcome = built.definition ? sampleOutcome(records, header, built.definition) : null;
  if (outcome?.stopped && built.definition?.preset) {
    // The import could not plan the file with the preset: the columns alone say the same.
    const { preset: _p, ...rest } = built.definition;
    built.definition = rest;
    outcome = sampleOutcome(records, header, rest);
  }
  return {
    header,
    preset: built.definition?.preset ?? null,
    columns,
    definition: built.definition,
    phoneCountry,
    identifier: choice ?? null,
    outcome,
    problems: built.problems,
  };
}

function inferCountry(
  drafts: readonly Draft[],
  rows: readonly (readonly string[])[],
  languages: readonly Language[],
  options: SuggestOptions,
): PhoneCountryChoice | null {
  const phoneColumns = drafts
    .filter((d) => d.to === "phone" || d.to === "additionalPhones")
    .map((d) => d.index);
  if (phoneColumns.length === 0) return null;
  return inferPhoneCountry({
    rows,
    phoneColumns,
    emailColumns: drafts.filter((d) => d.to === "email" || d.to === "additionalEmails").map((d) => d.index),
    countryColumns: drafts
      .filter((d) => d.to === null && isCountryHeader(d.column) && d.occurrence === undefined)
      .map((d) => ({ index: d.index, header: d.column })),
    headerLanguages: languages,
    given: options.phoneCountry,
  });
}

function pickIdentifier(
  drafts: readonly Draft[],
  rows: readonly (readonly string[])[],
  headers: readonly string[],
  country: PhoneCountryChoice | null,
  properties: readonly PersonProperty[],
): IdentifierChoice | undefined {
  const phones = drafts
    .filter((d) => d.to === "phone" || d.to === "additionalPhones")
    .sort((a, b) => phoneRank(a.column) - phoneRank(b.column) || a.index - b.index);
  const uniqueProperties = drafts.flatMap((d) => {
    const to = d.to;
    if (to === null || typeof to === "string" || !("propertyId" in to)) return [];
    return properties.some((p) => p.propertyId === to.propertyId && p.isUnique)
      ? [{ index: d.index, propertyId: to.propertyId }]
      : [];
  });
  const countryColumn = country?.column ? headers.indexOf(country.column) : -1;
  return chooseIdentifier({
    rows,
    headers,
    emailColumn: drafts.find((d) => d.to === "email")?.index,
    phoneColumns: phones.map((d) => d.index),
    uniqueProperties,
    phoneCountry: country?.country ?? null,
    phoneCountryColumn: countryColumn >= 0 ? countryColumn : undefined,
  });
}

function buildDefinition(
  columns: readonly ColumnSuggestion[],
  ctx: {
    header: boolean;
    preset: PresetName | null;
    options: SuggestOptions;
    phoneCountry: PhoneCountryChoice | null;
    identifier: string | undefined;
  },
): Pick<MappingSuggestion, "definition" | "problems"> {
  const { options, identifier, phoneCountry } = ctx;
  if (identifier === undefined) {
    return {
      definition: null,
      problems: [
        {
          path: "target.identifier",
          message:
            "no column reads as an email, a phone number or a unique property: a job needs one to match people by; map it by hand",
        },
      ],
    };
  }
  // The keys the import reads beyond the contract's fields, typed as the job schema of the reader has them.
  const definition = {
    kind: "import",
    name: options.name,
    description: `Suggested from the columns of ${options.fileName ? path.basename(options.fileName) : "a file"}`,
    ...(ctx.preset ? { preset: ctx.preset } : {}),
    ...(phoneCountry?.country ? { phoneCountry: phoneCountry.country } : {}),
    ...(phoneCountry?.column ? { phoneCountryColumn: phoneCountry.column } : {}),
    ...(ctx.header ? {} : { source: { header: false } }),
    target: { studyId: options.studyId ?? STUDY_PLACEHOLDER, identifier },
    columns: columns.flatMap((c) =>
      c.to === null
        ? []
        : [
            {
              column: c.column,
              ...(c.occurrence !== undefined ? { occurrence: c.occurrence } : {}),
              to: c.to,
              ...(c.transforms.length > 0 ? { transforms: c.transforms } : {}),
            },
          ],
    ),
  } as ImportJobDefinitionInput;
  const parsed = ImportJobDefinition.safeParse(definition);
  return parsed.success
    ? { definition, problems: [] }
    : { definition: null, problems: problemsOf(parsed.error) };
}
