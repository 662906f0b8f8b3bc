import { LIST_FIELDS } from "../api/schemas/person.ts";
import type { ColumnMapping, ImportJobDefinition, PersonField, Transform } from "../config/import-job.ts";
import { describeHeaders } from "./header-echo.ts";
import { ImportFileError } from "./import-error.ts";
import { MissingIdentifierError } from "./missing-identifier-error.ts";
import { PRESETS } from "./presets/index.ts";
import {
  compileTransforms,
  consentPolarity,
  countryReader,
  type TransformContext,
  type TransformFn,
} from "./transforms/index.ts";

/** Header matching ignores case, spaces, punctuation and accents: "E-Mail Address" = "email address". */
export function normalizeHeader(h: string): string {
  return h
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, "");
}

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

/**
 * A header row that ends with a delimiter has an empty last name: that
 * column is not one (Outlook's CSV writes a delimiter after every cell), and
 * rows may have it or not, as long as it is empty (map-row.ts).
 */
function withoutTrailingEmpty(headers: readonly string[]): readonly string[] {
  return headers.length > 1 && (headers[headers.length - 1] as string).trim() === ""
    ? headers.slice(0, -1)
    : headers;
}

export function describeTarget(to: ColumnMapping["to"]): string {
  if (typeof to === "string") return to;
  return "propertyId" in to ? `property ${to.propertyId}` : `property "${to.name}"`;
}

/**
 * Matches the file's headers with the definition's columns, then the preset's
 * synonyms, and lists what is left. A mapped name that the file repeats is an
 * error: which of the two columns was meant cannot be guessed.
 */
export function planColumns(headersIn: readonly string[], def: ImportJobDefinition): ColumnPlan {
  const headers = withoutTrailingEmpty(headersIn).map((h, i) =>
    h.trim() === "" ? `column${i + 1}` : h.trim(),
  );
  const byName = new Map<string, number[]>();
  headers.forEach((h, i) => {
    const key = normalizeHeader(h);
    const list = byName.get(key);
    if (list) list.push(i);
    else byName.set(key, [i]);
  });
  const used = new Set<number>();
  const missing = (name: string, where: string) =>
    new ImportFileError(
      "file_missing_column",
      `${where} names the column "${name}", which the file does not have (${describeHeaders(headers)})`,
    );
  const find = (name: string, where: string): number => {
    const idx = byName.get(normalizeHeader(name));
    if (idx === undefined || idx.length === 0) throw missing(name, where);
    if (idx.length > 1) {
      const at = idx.map((i) => i + 1);
      throw new ImportFileError(
        "file_duplicate_header",
        `the header "${name}" (${where}) appears in columns ${at.join(", ")}: say which with occurrence: 1 to ${at.length} (the first is 1), or position: ${at.join(" or ")}`,
      );
    }
    return idx[0] as number;
  };
  /** A job's column: by position, by occurrence of its name, or by a name the file has once. */
  const findMapped = (c: ColumnMapping, where: string): number => {
    if (c.position !== undefined) {
      const index = c.position - 1;
      if (index >= headers.length) {
        throw new ImportFileError(
          "file_missing_column",
          `${where} names column ${c.position}, and the file has ${headers.length} (${describeHeaders(headers)})`,
        );
      }
      const label = c.column;
      const at = headers[index] as string;
      if (label !== undefined && def.source.header && normalizeHeader(label) !== normalizeHeader(at)) {
        throw new ImportFileError(
          "file_missing_column",
          `${where} names column ${c.position} "${label}", and the file's column ${c.position} is headed "${at}": fix the position or the label`,
        );
      }
      return index;
    }
    const name = c.column as string;
    if (c.occurrence === undefined) return find(name, where);
    const idx = byName.get(normalizeHeader(name)) ?? [];
    const index = idx[c.occurrence - 1];
    if (index === undefined) {
      if (idx.length === 0) throw missing(name, where);
      throw new ImportFileError(
        "file_missing_column",
        `${where} names occurrence ${c.occurrence} of "${name}", and the file has ${idx.length} column${idx.length === 1 ? "" : "s"} of that name (column ${idx.map((i) => i + 1).join(", ")})`,
      );
    }
    return index;
  };

  const ctx = { phoneCountry: def.phoneCountry };
  const countryColumn = def.phoneCountryColumn;
  const identifier = def.target.identifier;
  const columns: PlannedColumn[] = [];
  const filled = new Set<string>();
  def.columns.forEach((c, i) => {
    const isIdentifier = feedsIdentifier(c.to, identifier);
    // A job's column the file lacks stays file_missing_column (its message names both sides already).
    const index = findMapped(c, `columns.${i}`);
    used.add(index);
    if (typeof c.to === "string") filled.add(c.to);
    const header = headers[index] as string;
    columns.push({
      index,
      header,
      to: c.to,
      transform: compileColumn(c.transforms, c.to, header, ctx),
      empty: c.empty,
      source: "definition",
      identifier: isIdentifier,
      transformFor: perCountry(c.transforms, c.to, header, ctx, countryColumn !== undefined),
    });
  });

  if (def.preset) {
    for (const rule of PRESETS[def.preset].rules) {
      const field = typeof rule.to === "string" ? rule.to : undefined;
      if (field && filled.has(field)) continue;
      const isList = field !== undefined && LIST_FIELDS.includes(field as PersonField);
      for (const name of rule.headers) {
        // A repeated name is the person's column first: a CRM writes the contact's own columns
        // before an associated company's (docs/imports.md, "Repeated headers").
        const index = byName.get(normalizeHeader(name))?.find((i) => !used.has(i));
        if (index === undefined) continue;
        used.add(index);
        const header = headers[index] as string;
        columns.push({
          index,
          header,
          to: rule.to,
          transform: compileColumn(rule.transforms, rule.to, header, ctx),
          empty: "omit",
          source: "preset",
          identifier: feedsIdentifier(rule.to, identifier),
          transformFor: perCountry(rule.transforms, rule.to, header, ctx, countryColumn !== undefined),
        });
        // A list field takes every synonym present (Mobile and Home Phone); a scalar only the first.
        if (!isList) break;
      }
    }
  }

  let population: PopulationPlan = { fixed: null };
  const pop = def.target.population;
  if (pop && "id" in pop) population = { fixed: pop.id };
  else if (pop) {
    const index = find(pop.column, "target.population.column");
    used.add(index);
    population = {
      fixed: null,
      index,
      values: new Map(Object.entries(pop.values).map(([k, v]) => [k.trim().toLowerCase(), v])),
      fallback: pop.default,
    };
  }

  let phoneCountry: ColumnPlan["phoneCountry"];
  if (countryColumn !== undefined) {
    const index = find(countryColumn, "phoneCountryColumn");
    phoneCountry = { index, read: countryReader() };
    // Read for the phones; mapped as well only when a mapping says so.
    used.add(index);
  }

  const ignored: string[] = [];
  for (const name of def.ignoreColumns) {
    for (const i of byName.get(normalizeHeader(name)) ?? []) {
      if (used.has(i)) continue;
      used.add(i);
      ignored.push(headers[i] as string);
    }
  }

  const unmapped: string[] = [];
  headers.forEach((h, i) => {
    if (used.has(i)) return;
    const repeated = (byName.get(normalizeHeader(h))?.length ?? 0) > 1;
    unmapped.push(repeated ? `${h} (column ${i + 1})` : h);
    if (def.unmapped === "properties") {
      columns.push({
        index: i,
        header: h,
        to: { name: h, propertyType: "STRING" },
        transform: (v) => v,
        empty: "omit",
        source: "unmapped",
        identifier: false,
      });
    }
  });
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
