import { LIST_FIELDS } from "../api/schemas/person.ts";
import type { ColumnMapping, ImportJobDefinition, PersonField } from "../config/import-job.ts";
import { describeHeaders } from "./header-echo.ts";
import { ImportFileError } from "./import-error.ts";
import { MissingIdentifierError } from "./missing-identifier-error.ts";
import { PRESETS } from "./presets/index.ts";
import { compileTransforms, type TransformFn } from "./transforms/index.ts";

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
}

/** Whether a column's target is the identifier (`email`, `phone` or `property:<propertyId>`). */
export function feedsIdentifier(to: ColumnMapping["to"], identifier: string): boolean {
  if (typeof to === "string") return to === identifier;
  return "propertyId" in to && identifier === `property:${to.propertyId}`;
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
  const headers = headersIn.map((h, i) => (h.trim() === "" ? `column${i + 1}` : h.trim()));
  const byName = new Map<string, number[]>();
  headers.forEach((h, i) => {
    const key = normalizeHeader(h);
    const list = byName.get(key);
    if (list) list.push(i);
    else byName.set(key, [i]);
  });
  const used = new Set<number>();
  const find = (name: string, where: string, required: boolean): number | undefined => {
    const idx = byName.get(normalizeHeader(name));
    if (idx === undefined || idx.length === 0) {
      if (!required) return undefined;
      throw new ImportFileError(
        "file_missing_column",
        `${where} names the column "${name}", which the file does not have (${describeHeaders(headers)})`,
      );
    }
    if (idx.length > 1) {
      throw new ImportFileError(
        "file_duplicate_header",
        `the header "${name}" (${where}) appears in columns ${idx.map((i) => i + 1).join(" and ")}: rename one, or remove it`,
      );
    }
    return idx[0];
  };

  const ctx = { phoneCountry: def.phoneCountry };
  const identifier = def.target.identifier;
  const columns: PlannedColumn[] = [];
  const filled = new Set<string>();
  def.columns.forEach((c, i) => {
    const isIdentifier = feedsIdentifier(c.to, identifier);
    // A job's column the file lacks stays file_missing_column (its message names both sides already).
    const index = find(c.column, `columns.${i}`, true) as number;
    used.add(index);
    if (typeof c.to === "string") filled.add(c.to);
    columns.push({
      index,
      header: headers[index] as string,
      to: c.to,
      transform: compileTransforms(c.transforms, ctx),
      empty: c.empty,
      source: "definition",
      identifier: isIdentifier,
    });
  });

  if (def.preset) {
    for (const rule of PRESETS[def.preset].rules) {
      const field = typeof rule.to === "string" ? rule.to : undefined;
      if (field && filled.has(field)) continue;
      const isList = field !== undefined && LIST_FIELDS.includes(field as PersonField);
      for (const name of rule.headers) {
        const candidates = byName.get(normalizeHeader(name));
        if (!candidates || candidates.every((i) => used.has(i))) continue;
        const index = find(name, `preset ${def.preset} (${describeTarget(rule.to)})`, true) as number;
        used.add(index);
        columns.push({
          index,
          header: headers[index] as string,
          to: rule.to,
          transform: compileTransforms(rule.transforms, ctx),
          empty: "omit",
          source: "preset",
          identifier: feedsIdentifier(rule.to, identifier),
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
    const index = find(pop.column, "target.population.column", true) as number;
    used.add(index);
    population = {
      fixed: null,
      index,
      values: new Map(Object.entries(pop.values).map(([k, v]) => [k.trim().toLowerCase(), v])),
      fallback: pop.default,
    };
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
  return { headers, columns, population, unmapped, ignored };
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
