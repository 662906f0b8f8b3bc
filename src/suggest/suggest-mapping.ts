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
import { dateTransformFor } from "./date-formats.ts";
import { type HeaderReading, readHeader } from "./header-match.ts";
import {
  FALSE_WORDS,
  FIRST_NAME_BESIDE_LAST,
  type HeaderKind,
  SURNAME_BESIDE_FIRST,
  TRUE_WORDS,
} from "./header-words.ts";
import { detectPreset, presetColumns } from "./preset-match.ts";
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
function applyPreset(drafts: Draft[], headers: readonly string[], duplicate: Set<number>): PresetName | null {
  const preset = detectPreset(headers);
  if (!preset) return null;
  for (const { index, rule } of presetColumns(preset, headers)) {
    const d = drafts[index] as Draft;
    if (duplicate.has(index)) continue;
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

/** The yes/no words a column needs beyond the boolean transform's defaults, and the flip of a consent. */
function booleanTransforms(values: readonly string[], negate: boolean): Transform[] | undefined {
  const words = new Set(values.map((v) => v.trim().toLowerCase()).filter(Boolean));
  const defaults = new Set([
    "yes",
    "y",
    "true",
    "t",
    "1",
    "no",
    "n",
    "false",
    "f",
    "0",
    "subscribed",
    "unsubscribed",
  ]);
  if ([...words].every((w) => defaults.has(w))) return negate ? [{ boolean: { negate: true } }] : [];
  const known = new Set([...TRUE_WORDS, ...FALSE_WORDS]);
  if (![...words].every((w) => known.has(w))) return undefined;
  return [{ boolean: { true: TRUE_WORDS, false: FALSE_WORDS, ...(negate ? { negate: true } : {}) } }];
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
  const holder = new Map<PersonField, Draft>();
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
      transforms = booleanTransforms(filled, c.kind === "consent");
      if (!transforms) {
        transforms = c.kind === "consent" ? [{ boolean: { negate: true } }] : [];
        confidence = 0.6;
        c.note += "; some of its values are no yes/no word the import reads";
      }
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
  return s
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/**
 * Suggests how a file's columns map onto a person: a CRM's preset first,
 * then headers as CRMs, spreadsheets and form tools write them (English,
 * German, French, Spanish), then what the values look like, then the
 * workspace's properties by name. `records` are the file's first records,
 * header row included when it has one.
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
  const width = Math.max(0, ...records.map((r) => r.length));
  const headers = Array.from({ length: width }, (_v, i) => {
    const h = header ? (first[i] ?? "").trim() : "";
    return h === "" ? `column${i + 1}` : h;
  });
  const rows = header ? records.slice(1) : records;
  const counts = new Map<string, number>();
  for (const h of headers) counts.set(normalizeHeader(h), (counts.get(normalizeHeader(h)) ?? 0) + 1);
  const duplicate = new Set(
    headers.flatMap((h, i) => ((counts.get(normalizeHeader(h)) ?? 0) > 1 ? [i] : [])),
  );

  const drafts: Draft[] = headers.map((column, index) => ({
    index,
    column,
    to: null,
    transforms: [],
    confidence: 0,
    why: "none",
    note: "",
    reading: header ? readHeader(column) : { unknown: true },
    values: rows.map((r) => r[index] ?? ""),
  }));

  const preset = header ? applyPreset(drafts, headers, duplicate) : null;
  const open = drafts.filter((d) => !duplicate.has(d.index));
  const languages = open.flatMap((d) =>
    "language" in d.reading && d.reading.language ? [d.reading.language] : [],
  );
  const dayFirst = languages.filter((l) => l !== "en").length > languages.filter((l) => l === "en").length;
  assignFields(candidatesOf(open), drafts, dayFirst);
  resolveNameHalves(open);
  matchProperties(open, options.properties ?? []);
  for (const d of drafts) {
    if (d.to !== null) continue;
    d.why = "none";
    d.transforms = [];
    // A column whose field a stronger column took keeps the note that says so.
    if (d.note !== "") continue;
    const none = duplicate.has(d.index)
      ? { note: "the header repeats: which of the columns is meant cannot be told", confidence: 0.9 }
      : noneNote(d.reading);
    d.note = none.note;
    d.confidence = none.confidence;
  }

  const columns: ColumnSuggestion[] = drafts.map(({ reading: _r, values: _v, ...c }) => c);
  return { header, preset, columns, ...buildDefinition(columns, { header, preset, options }) };
}

function identifierOf(
  columns: readonly ColumnSuggestion[],
  properties: readonly PersonProperty[],
): string | undefined {
  if (columns.some((c) => c.to === "email")) return "email";
  if (columns.some((c) => c.to === "phone")) return "phone";
  for (const c of columns) {
    if (c.to === null || typeof c.to === "string" || !("propertyId" in c.to)) continue;
    const id = c.to.propertyId;
    if (properties.some((p) => p.propertyId === id && p.isUnique)) return `property:${id}`;
  }
  return undefined;
}

function buildDefinition(
  columns: readonly ColumnSuggestion[],
  ctx: { header: boolean; preset: PresetName | null; options: SuggestOptions },
): Pick<MappingSuggestion, "definition" | "problems"> {
  const { options } = ctx;
  const identifier = identifierOf(columns, options.properties ?? []);
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
  const definition: ImportJobDefinitionInput = {
    kind: "import",
    name: options.name,
    description: `Suggested from the columns of ${options.fileName ? path.basename(options.fileName) : "a file"}`,
    ...(ctx.preset ? { preset: ctx.preset } : {}),
    ...(options.phoneCountry ? { phoneCountry: options.phoneCountry } : {}),
    ...(ctx.header ? {} : { source: { header: false } }),
    target: { studyId: options.studyId ?? STUDY_PLACEHOLDER, identifier },
    columns: columns.flatMap((c) =>
      c.to === null
        ? []
        : [{ column: c.column, to: c.to, ...(c.transforms.length > 0 ? { transforms: c.transforms } : {}) }],
    ),
  };
  const parsed = ImportJobDefinition.safeParse(definition);
  return parsed.success
    ? { definition, problems: [] }
    : { definition: null, problems: problemsOf(parsed.error) };
}
