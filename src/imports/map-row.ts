import {
  type ImportPerson,
  ImportPerson as ImportPersonSchema,
  type PersonPropertyInput,
} from "../api/index.ts";
import type { ImportJobDefinition, PersonField } from "../config/import-job.ts";
import { LIST_FIELDS } from "../config/import-job.ts";
import type { ColumnPlan, PlannedColumn } from "./column-plan.ts";
import type { RowIssue } from "./row-issue.ts";
import { isFailure, toBoolean } from "./transforms/index.ts";

export type MappedRow =
  | { ok: true; person: ImportPerson; key: string; population: string | null }
  | { ok: false; issues: RowIssue[] };

/** Characters a decoded CSV cell should never hold: a wrong encoding or binary bytes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const GARBAGE = /[\u0000-\u0008\u000B\u000E-\u001F\uFFFD]/;
const implicitBoolean = toBoolean();

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
    let issues: RowIssue[] | undefined;
    const addIssue = (code: string, col: PlannedColumn, message: string) => {
      issues ??= [];
      issues.push({
        code,
        path: typeof col.to === "string" ? [col.to] : ["properties"],
        message: `${col.header}: ${message}`,
        row,
      });
    };

    for (const col of columns) {
      const raw = cells[col.index] as string;
      if (raw.length > maxField) {
        addIssue("field_too_long", col, `value is ${raw.length} characters long; the limit is ${maxField}`);
        continue;
      }
      const cell = raw.trim();
      let value: unknown;
      if (cell === "") value = undefined;
      else if (GARBAGE.test(cell)) {
        addIssue(
          "invalid_characters",
          col,
          "holds control characters or undecodable bytes (wrong encoding?)",
        );
        continue;
      } else {
        const v = col.transform(cell);
        if (isFailure(v)) {
          addIssue(v.code, col, v.message);
          continue;
        }
        value = v === "" || (Array.isArray(v) && v.length === 0) ? undefined : v;
      }
      if (value === undefined) {
        if (col.empty === "omit") continue;
        value = null;
      }
      const to = col.to;
      if (typeof to === "string") {
        if (LIST_FIELDS.includes(to as PersonField)) {
          const list = (person[to] as string[] | undefined) ?? [];
          if (typeof value === "string") list.push(value);
          else if (Array.isArray(value)) list.push(...(value as string[]));
          else {
            addIssue("invalid_type", col, "expects text");
            continue;
          }
          person[to] = list;
        } else if (to === "isOptedOut" && typeof value === "string") {
          const b = implicitBoolean(value);
          if (isFailure(b)) {
            addIssue(b.code, col, b.message);
            continue;
          }
          person[to] = b;
        } else if (Array.isArray(value)) {
          addIssue("invalid_type", col, "expects one value, got a list");
        } else person[to] = value;
      } else {
        properties ??= [];
        propHeaders ??= [];
        properties.push({ ...to, value: value as PersonPropertyInput["value"] });
        propHeaders.push(col.header);
      }
    }
    if (properties) person.properties = properties;

    let population: string | null = pop.fixed;
    if (pop.index !== undefined && pop.values) {
      const v = (cells[pop.index] ?? "").trim().toLowerCase();
      const id = pop.values.get(v);
      if (id !== undefined) population = id;
      else if (pop.fallback !== undefined) population = pop.fallback;
      else {
        issues ??= [];
        issues.push({
          code: "unknown_population",
          path: ["population"],
          message: `${plan.headers[pop.index]}: value not listed in target.population.values and no default`,
          row,
        });
      }
    }
    if (issues) return { ok: false, issues };

    const parsed = ImportPersonSchema.safeParse(person);
    if (!parsed.success) {
      const ph = propHeaders ?? [];
      return {
        ok: false,
        issues: parsed.error.issues.map((i) => ({
          code: i.code,
          path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
          message: `${where(i.path, ph)}: ${i.message}`,
          row,
        })),
      };
    }
    const key = identifierKey(parsed.data, identifier);
    if (key === undefined) {
      const what = identifier.startsWith("property:")
        ? `property ${identifierSelector(identifier)}`
        : identifier;
      return {
        ok: false,
        issues: [
          {
            code: "missing_identifier",
            path: identifier.startsWith("property:") ? ["properties"] : [identifier],
            message: `${fieldHeader.get(identifier) ?? what}: empty, and it is the identifier (${what})`,
            row,
          },
        ],
      };
    }
    return { ok: true, person: parsed.data, key, population };
  };
}

export type RowMapper = ReturnType<typeof createRowMapper>;
