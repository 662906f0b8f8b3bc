import { regexes } from "zod";
import {
  type ImportPerson,
  ImportPerson as ImportPersonSchema,
  type PersonPropertyInput,
} from "../api/index.ts";
import type { ImportJobDefinition, PersonField } from "../config/import-job.ts";
import { LIST_FIELDS } from "../config/import-job.ts";
import { type ColumnPlan, describeTarget, type PlannedColumn } from "./column-plan.ts";
import type { RowIssue } from "./row-issue.ts";
import { isFailure, type TransformFailure, type TransformResult, toBoolean } from "./transforms/index.ts";

/**
 * A value left out of an imported person under `invalidOptionalValues: drop`.
 * `message` says what is wrong without quoting the value, which may be personal data.
 */
export interface DroppedValue {
  /** The person field (`phone`), or the property (`property property_5`, `property "Company"`). */
  field: string;
  /** The file's header of the column it came from. */
  column: string;
  code: string;
  message: string;
}

export type MappedRow =
  | {
      ok: true;
      person: ImportPerson;
      key: string;
      population: string | null;
      /** Present only when a failing optional value was left out. */
      dropped?: DroppedValue[];
      /** The row said the person is not opted out, and it was not sent (the job has no `optIn: allow`). */
      optInHeldBack?: true;
    }
  | { ok: false; issues: RowIssue[] };

/**
 * A row's problems so far, made on its first one (most rows have none).
 * `dropped` mirrors the issues that `drop` may leave out; `blocking` counts
 * the others, any of which rejects the row with every issue it has.
 */
interface RowProblems {
  issues: RowIssue[];
  dropped: DroppedValue[];
  blocking: number;
}

/** Characters a decoded CSV cell should never hold: a wrong encoding or binary bytes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const GARBAGE = /[\u0000-\u0008\u000B\u000E-\u001F]/;
const implicitBoolean = toBoolean();

const FIELD_SCHEMAS = ImportPersonSchema.shape;

const isEmail = (v: unknown) => typeof v === "string" && regexes.email.test(v);
const isPhone = (v: unknown) => typeof v === "string" && v.length >= 1;
const isName = (v: unknown) => typeof v === "string" || v === null;

/**
 * Values that ImportPerson's field schemas certainly accept, told by the same
 * patterns without zod's machinery (~0.6 µs a row). A value these do not vouch
 * for still goes to the schema, which decides and words the problem.
 */
export const SURELY_VALID: { [K in keyof typeof FIELD_SCHEMAS]?: (v: unknown) => boolean } = {
  email: isEmail,
  phone: isPhone,
  firstName: isName,
  lastName: isName,
  isOptedOut: (v) => typeof v === "boolean",
  lastContactDate: (v) => typeof v === "string" && regexes.date.test(v),
  additionalEmails: (v) => Array.isArray(v) && v.every(isEmail),
  additionalPhones: (v) => Array.isArray(v) && v.every(isPhone),
};

/**
 * Checks a mapped person against the contract's ImportPerson, field by field:
 * each field a cell filled goes through ImportPerson's own schema for it.
 * Properties are not re-checked: their keys come from the validated job
 * definition and their values are text, lists or booleans, all of which
 * PropertyValue takes. Whole-object parsing costs more than the rest of a row.
 */
export function checkPerson(person: Record<string, unknown>): Omit<RowIssue, "row">[] | undefined {
  let problems: Omit<RowIssue, "row">[] | undefined;
  for (const key in person) {
    if (SURELY_VALID[key as keyof typeof FIELD_SCHEMAS]?.(person[key])) continue;
    const schema = FIELD_SCHEMAS[key as keyof typeof FIELD_SCHEMAS];
    const r = schema.safeParse(person[key]);
    if (r.success) continue;
    problems ??= [];
    for (const i of r.error.issues) {
      problems.push({
        code: i.code,
        path: [key, ...i.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
        message: i.message,
      });
    }
  }
  return problems;
}

/** The value of a person that the identifier names, as the dedupe key. */
export function identifierKey(person: ImportPerson, identifier: string): string | undefined {
  if (identifier === "email") return person.email?.toLowerCase();
  if (identifier === "phone") return person.phone;
  const id = identifier.slice("property:".length);
  for (const p of person.properties ?? []) {
    if ("propertyId" in p && p.propertyId === id && p.value !== null && p.value !== "") {
      return Array.isArray(p.value) ? p.value.join(";") : String(p.value);
    }
  }
  return undefined;
}

/** The request's identifier selector for a job's `identifier`. */
export function identifierSelector(identifier: string): string {
  return identifier.startsWith("property:") ? identifier.slice("property:".length) : identifier;
}

/**
 * Builds the mapper from a file's cells to a person: trims, applies each
 * column's transforms, resolves the population, then validates the person with
 * the contract's ImportPerson schema. Cells are trimmed before anything else.
 */
export function createRowMapper(plan: ColumnPlan, def: ImportJobDefinition) {
  const columns = plan.columns;
  const maxField = def.source.maxFieldLength;
  const identifier = def.target.identifier;
  const pop = plan.population;
  const width = plan.headers.length;
  // Under `drop`, a failing value outside the identifier leaves the person instead of rejecting the row.
  const dropInvalid = def.invalidOptionalValues === "drop";
  // Research consent moves one way: a "no" opts nobody back in unless the job says `optIn: allow`.
  const allowOptIn = def.optIn === "allow";

  const fieldHeader = new Map<string, string>();
  for (const c of columns) {
    if (typeof c.to === "string") fieldHeader.set(c.to, c.header);
    else if ("propertyId" in c.to) fieldHeader.set(`property:${c.to.propertyId}`, c.header);
  }

  function where(path: readonly PropertyKey[], propHeaders: string[]): string {
    const [head, index] = path;
    if (head === "properties" && typeof index === "number") return propHeaders[index] ?? "properties";
    if (typeof head === "string") return fieldHeader.get(head) ?? head;
    return "row";
  }

  // Kinds settled once per column, so the per-row loop does no lookups.
  const KIND_SCALAR = 0;
  const KIND_LIST = 1;
  const KIND_OPTED_OUT = 2;
  const KIND_PROPERTY = 3;
  const steps = columns.map((col) => {
    const to = col.to;
    const kind =
      typeof to !== "string"
        ? KIND_PROPERTY
        : LIST_FIELDS.includes(to as PersonField)
          ? KIND_LIST
          : to === "isOptedOut"
            ? KIND_OPTED_OUT
            : KIND_SCALAR;
    return {
      col,
      index: col.index,
      kind,
      field: typeof to === "string" ? to : "",
      propertyId: typeof to !== "string" && "propertyId" in to ? to.propertyId : undefined,
      propertyName: typeof to !== "string" && "name" in to ? to.name : "",
      propertyType: typeof to !== "string" && "name" in to ? to.propertyType : "",
      nullOnEmpty: col.empty === "null",
      transform: col.transform,
    };
  });

  function issue(
    problems: RowProblems | undefined,
    code: string,
    col: PlannedColumn,
    message: string,
    row: number,
  ): RowProblems {
    const p = problems ?? { issues: [], dropped: [], blocking: 0 };
    p.issues.push({
      code,
      path: typeof col.to === "string" ? [col.to] : ["properties"],
      message: `${col.header}: ${message}`,
      row,
    });
    if (dropInvalid && !col.identifier) {
      p.dropped.push({ field: describeTarget(col.to), column: col.header, code, message });
    } else p.blocking++;
    return p;
  }

  /**
   * Takes the schema's verdict on a person: under `drop`, a failing field
   * other than the identifier leaves the person (a failing list item leaves
   * its list); anything else is blocking.
   */
  function settleSchemaProblems(
    person: Record<string, unknown>,
    found: Omit<RowIssue, "row">[],
    problems: RowProblems | undefined,
    propHeaders: string[],
    row: number,
  ): RowProblems {
    const p = problems ?? { issues: [], dropped: [], blocking: 0 };
    const badItems = new Map<string, Set<number>>();
    for (const i of found) {
      const at = where(i.path, propHeaders);
      p.issues.push({ ...i, message: `${at}: ${i.message}`, row });
      const [field, item] = i.path;
      if (!dropInvalid || typeof field !== "string" || field === identifier) {
        p.blocking++;
        continue;
      }
      p.dropped.push({ field, column: at, code: i.code, message: i.message });
      if (typeof item === "number" && Array.isArray(person[field])) {
        const set = badItems.get(field) ?? new Set<number>();
        set.add(item);
        badItems.set(field, set);
      } else badItems.set(field, new Set());
    }
    if (p.blocking > 0) return p;
    for (const [field, items] of badItems) {
      const list = person[field];
      const kept = Array.isArray(list) && items.size > 0 ? list.filter((_v, k) => !items.has(k)) : [];
      if (kept.length > 0) person[field] = kept;
      else delete person[field];
    }
    return p;
  }

  return function mapRow(cells: readonly string[], row: number): MappedRow {
    if (cells.length !== width) {
      return {
        ok: false,
        issues: [
          {
            code: "ragged_row",
            path: [],
            message: `row has ${cells.length} cells, the header has ${width}`,
            row,
          },
        ],
      };
    }
    const person: Record<string, unknown> = {};
    let properties: PersonPropertyInput[] | undefined;
    let propHeaders: string[] | undefined;
    let problems: RowProblems | undefined;
    let heldBack = false;

    for (let c = 0; c < steps.length; c++) {
      const p = steps[c] as (typeof steps)[number];
      const raw = cells[p.index] as string;
      if (raw.length > maxField) {
        problems = issue(
          problems,
          "field_too_long",
          p.col,
          `value is ${raw.length} characters long; the limit is ${maxField}`,
          row,
        );
        continue;
      }
      const cell = raw.trim();
      let value: unknown;
      if (cell === "") value = undefined;
      else if (GARBAGE.test(cell)) {
        problems = issue(
          problems,
          "invalid_characters",
          p.col,
          "holds control characters or undecodable bytes (wrong encoding?)",
          row,
        );
        continue;
      } else {
        const v = p.transform(cell);
        if (isFailure(v)) {
          problems = issue(problems, v.code, p.col, v.message, row);
          continue;
        }
        value = v === "" || (Array.isArray(v) && v.length === 0) ? undefined : v;
      }
      if (value === undefined) {
        if (!p.nullOnEmpty) continue;
        value = null;
      }
      switch (p.kind) {
        case KIND_SCALAR:
          if (Array.isArray(value))
            problems = issue(problems, "invalid_type", p.col, "expects one value, got a list", row);
          else person[p.field] = value;
          break;
        case KIND_LIST: {
          const list = (person[p.field] as string[] | undefined) ?? [];
          if (typeof value === "string") list.push(value);
          else if (Array.isArray(value)) for (const v of value as string[]) list.push(v);
          else {
            problems = issue(problems, "invalid_type", p.col, "expects text", row);
            break;
          }
          person[p.field] = list;
          break;
        }
        case KIND_OPTED_OUT: {
          const b = typeof value === "string" ? implicitBoolean(value) : value;
          if (typeof b === "object" && b !== null && isFailure(b as TransformResult)) {
            const f = b as TransformFailure;
            problems = issue(problems, f.code, p.col, f.message, row);
          } else if (b === false && !allowOptIn) heldBack = true;
          else person.isOptedOut = b;
          break;
        }
        default:
          properties ??= [];
          propHeaders ??= [];
          // Object literals of two fixed shapes: spreading the target cost more than the rest of the row.
          properties.push(
            p.propertyId !== undefined
              ? { propertyId: p.propertyId, value: value as PersonPropertyInput["value"] }
              : {
                  name: p.propertyName,
                  propertyType: p.propertyType,
                  value: value as PersonPropertyInput["value"],
                },
          );
          propHeaders.push(p.col.header);
      }
    }
    let population: string | null = pop.fixed;
    if (pop.index !== undefined && pop.values) {
      const v = (cells[pop.index] ?? "").trim().toLowerCase();
      const id = pop.values.get(v);
      if (id !== undefined) population = id;
      else if (pop.fallback !== undefined) population = pop.fallback;
      else {
        problems ??= { issues: [], dropped: [], blocking: 0 };
        problems.issues.push({
          code: "unknown_population",
          path: ["population"],
          message: `${plan.headers[pop.index]}: value not listed in target.population.values and no default`,
          row,
        });
        problems.blocking++;
      }
    }
    if (problems && (!dropInvalid || problems.blocking > 0)) return { ok: false, issues: problems.issues };

    const found = checkPerson(person);
    if (found) {
      problems = settleSchemaProblems(person, found, problems, propHeaders ?? [], row);
      if (problems.blocking > 0) return { ok: false, issues: problems.issues };
    }
    if (properties) person.properties = properties;
    const valid = person as ImportPerson;
    const key = identifierKey(valid, identifier);
    if (key === undefined) {
      const what = identifier.startsWith("property:")
        ? `property ${identifierSelector(identifier)}`
        : identifier;
      return {
        ok: false,
        issues: [
          // Under `drop`, values it would have left out are reasons too: the row is not imported.
          ...(problems?.issues ?? []),
          {
            code: "missing_identifier",
            path: identifier.startsWith("property:") ? ["properties"] : [identifier],
            message: `${fieldHeader.get(identifier) ?? what}: empty, and it is the identifier (${what})`,
            row,
          },
        ],
      };
    }
    const held = heldBack ? { optInHeldBack: true as const } : {};
    if (problems) return { ok: true, person: valid, key, population, dropped: problems.dropped, ...held };
    return { ok: true, person: valid, key, population, ...held };
  };
}

export type RowMapper = ReturnType<typeof createRowMapper>;
