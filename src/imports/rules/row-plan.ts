import { LIST_FIELDS } from "../../api/schemas/person.ts";
import { FULL_NAME, type ImportJobDefinition, type PersonField } from "../../config/import-job.ts";
import type { ColumnPlan, PlannedColumn, PopulationPlan } from "./column-plan.ts";
import type { TransformFn } from "./transforms/index.ts";

/** Where a column's value goes: a one-value field, a list field, isOptedOut, or a property. */
export const KIND_SCALAR = 0;
export const KIND_LIST = 1;
export const KIND_OPTED_OUT = 2;
export const KIND_PROPERTY = 3;
export const KIND_FULL_NAME = 4;
export type ColumnKind =
  | typeof KIND_SCALAR
  | typeof KIND_LIST
  | typeof KIND_OPTED_OUT
  | typeof KIND_PROPERTY
  | typeof KIND_FULL_NAME;

/** Where a multi-value cell's values go: 0 none (not an email or phone column), else the list of the extra ones. */
export const MULTI_NONE = 0;
export const MULTI_EMAILS = 1;
export const MULTI_PHONES = 2;
export type MultiValue = typeof MULTI_NONE | typeof MULTI_EMAILS | typeof MULTI_PHONES;

/** One planned column, with everything the per-row loop needs settled once, so it does no lookups. */
export interface ColumnStep {
  col: PlannedColumn;
  /** The cell's index in the row. */
  index: number;
  kind: ColumnKind;
  /** The person field, for every kind but KIND_PROPERTY; "" otherwise. */
  field: string;
  propertyId: string | undefined;
  propertyName: string;
  propertyType: string;
  /** An empty cell sends null (the column's `empty: null`) rather than leaving the field out. */
  nullOnEmpty: boolean;
  transform: TransformFn;
  /** The transforms for a row's own phone country (phoneCountryColumn), when they read phones. */
  transformFor: ((country: string) => TransformFn) | undefined;
  /** An email or phone column: a cell of several values (` ::: `, `;`, `,`) is split (multi-value.ts). */
  multi: MultiValue;
  /**
   * One of several columns `to: email` or `to: phone`: the first valid value
   * of them, in the order listed, is the field's, the others go to its
   * additional list, and an invalid value is optional even for the identifier.
   */
  shared: boolean;
}

/** What mapping a row of one file under one definition needs, decided once per file. */
export interface RowPlan {
  steps: readonly ColumnStep[];
  /** The header's width: a row of another width is rejected whole. */
  width: number;
  /** The file's headers, as the column plan cleaned them. */
  headers: readonly string[];
  maxFieldLength: number;
  /** The job's identifier: email, phone or property:<propertyId>. */
  identifier: string;
  /**
   * The cells that feed the identifier, in the order they are taken (several
   * columns `to: phone` or `to: email`), and their headers joined to name
   * them in a missing identifier's message.
   */
  identifierIndexes: readonly number[];
  identifierHeaders: string;
  population: PopulationPlan;
  /** `invalidOptionalValues: drop`: a failing value outside the identifier leaves the person instead of rejecting the row. */
  dropInvalid: boolean;
  /** `optIn: allow`: research consent moves one way, so a "no" opts nobody back in unless the job says so. */
  allowOptIn: boolean;
  /** The file's header for each person field (`email`) and property (`property:<id>`), to name it in problems. */
  fieldHeader: ReadonlyMap<string, string>;
  /** The `phoneCountryColumn`'s index (-1 without one) and what reads its cells. */
  phoneCountryIndex: number;
  phoneCountryOf: (cell: string) => string | undefined;
}

function kindOf(to: PlannedColumn["to"]): ColumnKind {
  if (typeof to !== "string") return KIND_PROPERTY;
  if (to === FULL_NAME) return KIND_FULL_NAME;
  if (LIST_FIELDS.includes(to as PersonField)) return KIND_LIST;
  return to === "isOptedOut" ? KIND_OPTED_OUT : KIND_SCALAR;
}

/** Step 1, plan: the column plan turned into per-column steps and the row's settled rules. */
export function planRow(plan: ColumnPlan, def: ImportJobDefinition): RowPlan {
  const fieldHeader = new Map<string, string>();
  for (const c of plan.columns) {
    if (typeof c.to === "string") fieldHeader.set(c.to, c.header);
    else if ("propertyId" in c.to) fieldHeader.set(`property:${c.to.propertyId}`, c.header);
  }
  const identifierColumns = plan.columns.filter((c) => c.identifier);
  const perField = new Map<string, number>();
  for (const c of plan.columns) {
    if (c.to === "email" || c.to === "phone") perField.set(c.to, (perField.get(c.to) ?? 0) + 1);
  }
  const steps = plan.columns.map((col): ColumnStep => {
    const to = col.to;
    return {
      col,
      index: col.index,
      kind: kindOf(to),
      field: typeof to === "string" ? to : "",
      propertyId: typeof to !== "string" && "propertyId" in to ? to.propertyId : undefined,
      propertyName: typeof to !== "string" && "name" in to ? to.name : "",
      propertyType: typeof to !== "string" && "name" in to ? to.propertyType : "",
      nullOnEmpty: col.empty === "null",
      transform: col.transform,
      transformFor: col.transformFor,
      multi: multiOf(to),
      shared: (to === "email" || to === "phone") && (perField.get(to) ?? 0) > 1,
    };
  });
  return {
    steps,
    width: plan.headers.length,
    headers: plan.headers,
    maxFieldLength: def.source.maxFieldLength,
    identifier: def.target.identifier,
    identifierIndexes: identifierColumns.map((c) => c.index),
    identifierHeaders: identifierColumns.map((c) => c.header).join(", "),
    population: plan.population,
    // Absent means drop: an invalid optional value costs the value, not the person.
    dropInvalid: def.invalidOptionalValues !== "reject",
    allowOptIn: def.optIn === "allow",
    fieldHeader,
    phoneCountryIndex: plan.phoneCountry?.index ?? -1,
    phoneCountryOf: plan.phoneCountry?.read ?? (() => undefined),
  };
}

function multiOf(to: PlannedColumn["to"]): MultiValue {
  if (to === "email" || to === "additionalEmails") return MULTI_EMAILS;
  return to === "phone" || to === "additionalPhones" ? MULTI_PHONES : MULTI_NONE;
}
