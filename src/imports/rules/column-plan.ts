import { LIST_FIELDS } from "../../api/schemas/person.ts";
import type { ColumnMapping, ImportJobDefinition, PersonField, Transform } from "../../config/import-job.ts";
import { MissingIdentifierError } from "../missing-identifier-error.ts";
import { HeaderLookup, normalizeHeader } from "./header-lookup.ts";
import { PRESETS } from "./presets/index.ts";
import {
  compileTransforms,
  consentPolarity,
  countryReader,
  type TransformContext,
  type TransformFn,
} from "./transforms/index.ts";

export interface PlannedColumn {
  index: number;
  header: string;
  to: ColumnMapping["to"];
  transform: TransformFn;
  empty: "omit" | "null";
  /** Where the mapping came from, for the report. */
  source: "definition" | "preset" | "unmapped";
  /** It feeds the job's identifier: a failing value rejects the row whatever `invalidOptionalValues` says. */
  identifier: boolean;
  /**
   * The column's transforms with another default phone country: set when the
   * job has a `phoneCountryColumn` and the column reads phones in the default
   * country (the one-word `phone`). Memoised per country.
   */
  transformFor?: ((country: string) => TransformFn) | undefined;
}

export interface PopulationPlan {
  /** A fixed population for every row, null for none. */
  fixed: string | null;
  index?: number;
  values?: Map<string, string>;
  /** undefined: an unlisted value rejects the row. */
  fallback?: string | null | undefined;
}

export interface ColumnPlan {
  headers: string[];
  columns: PlannedColumn[];
  population: PopulationPlan;
  /** Columns no rule takes, as "Header" or "Header (column N)" when the name repeats. */
  unmapped: string[];
  ignored: string[];
  /** The `phoneCountryColumn`'s index, and what reads its cells. */
  phoneCountry?: { index: number; read: (cell: string) => string | undefined };
}

/** Whether a column's target is the identifier (`email`, `phone` or `property:<propertyId>`). */
export function feedsIdentifier(to: ColumnMapping["to"], identifier: string): boolean {
  if (typeof to === "string") return to === identifier;
  return "propertyId" in to && identifier === `property:${to.propertyId}`;
}

/** A column's transforms compiled for its target: an isOptedOut column reads consent by its header's polarity. */
function compileColumn(
  transforms: readonly Transform[],
  to: ColumnMapping["to"],
  header: string,
  ctx: TransformContext,
): TransformFn {
  if (to !== "isOptedOut") return compileTransforms(transforms, ctx);
  return compileTransforms(transforms, { ...ctx, optedOut: consentPolarity(normalizeHeader(header)) });
}

/** The column's transforms for each row country, when they read phones in the default country. */
function perCountry(
  transforms: readonly Transform[],
  to: ColumnMapping["to"],
  header: string,
  ctx: TransformContext,
  countryColumn: boolean,
): PlannedColumn["transformFor"] {
  if (!countryColumn || !transforms.includes("phone")) return undefined;
  const compiled = new Map<string, TransformFn>();
  return (country) => {
    let fn = compiled.get(country);
    if (fn === undefined) {
      fn = compileColumn(transforms, to, header, { ...ctx, phoneCountry: country });
      compiled.set(country, fn);
    }
    return fn;
  };
}

export function describeTarget(to: ColumnMapping["to"]): string {
  if (typeof to === "string") return to;
  return "propertyId" in to ? `property ${to.propertyId}` : `property "${to.name}"`;
}

/** What every planned column of one job shares: its transforms' context and its identifier. */
interface JobColumns {
  ctx: TransformContext;
  identifier: string;
  /** The job has a phoneCountryColumn: phone columns read each row's own country. */
  perRowCountry: boolean;
}

/** A column of the file planned under one rule (the job's or a preset's). */
function planned(
  lookup: HeaderLookup,
  index: number,
  rule: { to: ColumnMapping["to"]; transforms: readonly Transform[] },
  how: { empty: PlannedColumn["empty"]; source: PlannedColumn["source"] },
  job: JobColumns,
): PlannedColumn {
  const header = lookup.headers[index] as string;
  return {
    index,
    header,
    to: rule.to,
    transform: compileColumn(rule.transforms, rule.to, header, job.ctx),
    empty: how.empty,
    source: how.source,
    identifier: feedsIdentifier(rule.to, job.identifier),
    transformFor: perCountry(rule.transforms, rule.to, header, job.ctx, job.perRowCountry),
  };
}

/** The definition's columns, each found by position, occurrence or name (HeaderLookup.mapped). */
function planJobColumns(
  def: ImportJobDefinition,
  lookup: HeaderLookup,
  used: Set<number>,
  job: JobColumns,
): PlannedColumn[] {
  return def.columns.map((c, i) => {
    // A job's column the file lacks stays file_missing_column (its message names both sides already).
    const index = lookup.mapped(c, `columns.${i}`);
    used.add(index);
    return planned(lookup, index, c, { empty: c.empty, source: "definition" }, job);
  });
}

/**
 * The preset's synonyms, for the fields the job's own columns leave: a list
 * field takes every synonym present (Mobile and Home Phone), a one-value
 * field the first.
 */
function planPresetColumns(
  def: ImportJobDefinition,
  lookup: HeaderLookup,
  used: Set<number>,
  job: JobColumns,
): PlannedColumn[] {
  if (!def.preset) return [];
  const filled = new Set(def.columns.flatMap((c) => (typeof c.to === "string" ? [c.to] : [])));
  const columns: PlannedColumn[] = [];
  for (const rule of PRESETS[def.preset].rules) {
    const field = typeof rule.to === "string" ? rule.to : undefined;
    if (field && filled.has(field)) continue;
    const isList = field !== undefined && LIST_FIELDS.includes(field as PersonField);
    for (const name of rule.headers) {
      // A repeated name is the person's column first: a CRM writes the contact's own columns
      // before an associated company's (docs/imports.md, "Repeated headers").
      const index = lookup.all(name).find((i) => !used.has(i));
      if (index === undefined) continue;
      used.add(index);
      columns.push(planned(lookup, index, rule, { empty: "omit", source: "preset" }, job));
      if (!isList) break;
    }
  }
  return columns;
}

/** The population: a fixed one, none, or the column whose values `target.population.values` lists. */
function planPopulation(def: ImportJobDefinition, lookup: HeaderLookup, used: Set<number>): PopulationPlan {
  const pop = def.target.population;
  if (!pop) return { fixed: null };
  if ("id" in pop) return { fixed: pop.id };
  const index = lookup.only(pop.column, "target.population.column");
  used.add(index);
  return {
    fixed: null,
    index,
    values: new Map(Object.entries(pop.values).map(([k, v]) => [k.trim().toLowerCase(), v])),
    fallback: pop.default,
  };
}

/** The `phoneCountryColumn`: read for the phones; mapped as well only when a mapping says so. */
function planPhoneCountry(
  def: ImportJobDefinition,
  lookup: HeaderLookup,
  used: Set<number>,
): ColumnPlan["phoneCountry"] {
  if (def.phoneCountryColumn === undefined) return undefined;
  const index = lookup.only(def.phoneCountryColumn, "phoneCountryColumn");
  used.add(index);
  return { index, read: countryReader() };
}

/** The `ignoreColumns` no rule took, every column of each name. */
function takeIgnored(def: ImportJobDefinition, lookup: HeaderLookup, used: Set<number>): string[] {
  const ignored: string[] = [];
  for (const name of def.ignoreColumns) {
    for (const i of lookup.all(name)) {
      if (used.has(i)) continue;
      used.add(i);
      ignored.push(lookup.headers[i] as string);
    }
  }
  return ignored;
}

/** Under `unmapped: properties`, a column no rule takes is sent as a text property of its header's name. */
function unmappedProperty(lookup: HeaderLookup, index: number): PlannedColumn {
  const header = lookup.headers[index] as string;
  return {
    index,
    header,
    to: { name: header, propertyType: "STRING" },
    transform: (v) => v,
    empty: "omit",
    source: "unmapped",
    identifier: false,
  };
}

/**
 * Matches the file's headers with the definition's columns, then the preset's
 * synonyms, and lists what is left. A mapped name that the file repeats is an
 * error: which of the two columns was meant cannot be guessed.
 */
export function planColumns(headersIn: readonly string[], def: ImportJobDefinition): ColumnPlan {
  const lookup = new HeaderLookup(headersIn, def.source.header);
  const used = new Set<number>();
  const job: JobColumns = {
    ctx: { phoneCountry: def.phoneCountry },
    identifier: def.target.identifier,
    perRowCountry: def.phoneCountryColumn !== undefined,
  };
  const columns = planJobColumns(def, lookup, used, job);
  columns.push(...planPresetColumns(def, lookup, used, job));
  const population = planPopulation(def, lookup, used);
  const phoneCountry = planPhoneCountry(def, lookup, used);
  const ignored = takeIgnored(def, lookup, used);
  const unmapped: string[] = [];
  for (let i = 0; i < lookup.headers.length; i++) {
    if (used.has(i)) continue;
    unmapped.push(lookup.label(i));
    if (def.unmapped === "properties") columns.push(unmappedProperty(lookup, i));
  }
  const headers = [...lookup.headers];
  requireIdentifierColumn(columns, headers, def);
  return { headers, columns, population, unmapped, ignored, ...(phoneCountry ? { phoneCountry } : {}) };
}

/**
 * Stops a run whose file has no column for the identifier: its every row
 * would be rejected as "empty, and it is the identifier", which reads as a
 * finished run. A job's own column for it is required where it is planned.
 */
function requireIdentifierColumn(
  columns: readonly PlannedColumn[],
  headers: readonly string[],
  def: ImportJobDefinition,
): void {
  if (columns.some((c) => c.identifier)) return;
  const identifier = def.target.identifier;
  const rules = def.preset ? PRESETS[def.preset].rules.filter((r) => feedsIdentifier(r.to, identifier)) : [];
  const expected = rules.flatMap((r) => r.headers);
  throw new MissingIdentifierError(
    identifier,
    expected.length > 0
      ? { headers: expected, from: `preset ${def.preset}` }
      : { headers: [identifier], from: "the job" },
    { headers, headerRow: def.source.header },
  );
}
