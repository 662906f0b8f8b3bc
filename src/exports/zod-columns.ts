import { z } from "zod";
import type { ColumnSchema, ColumnType, Row, TableSchema } from "../sinks/index.ts";

/** camelCase → snake_case; a run of capitals is one word (`isPHI` → `is_phi`). */
export function snakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

/** The warehouse type of one field of an API schema. */
export function columnTypeOf(schema: z.ZodType): ColumnType {
  let s: z.ZodType = schema;
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodDefault || s instanceof z.ZodPrefault) s = s.unwrap() as z.ZodType;
    else break;
  }
  if (s instanceof z.ZodStringFormat) {
    if (s.format === "datetime") return "timestamp";
    if (s.format === "date") return "date";
    return "text";
  }
  if (s instanceof z.ZodString || s instanceof z.ZodEnum || s instanceof z.ZodLiteral) return "text";
  if (s instanceof z.ZodNumber) return s.isInt ? "bigint" : "double";
  if (s instanceof z.ZodBoolean) return "boolean";
  // A union whose options all map to one type (an open enum: known values or any string) is that type.
  if (s instanceof z.ZodUnion) {
    const types = new Set((s.options as z.ZodType[]).map((o) => columnTypeOf(o)));
    if (types.size === 1) return [...types][0] as ColumnType;
  }
  if (s instanceof z.ZodArray) {
    const element = columnTypeOf(s.element as z.ZodType);
    return element === "text" ? "text_array" : "json";
  }
  return "json";
}

/** What a table holds and where its fields are defined in the service's spec: for docs/warehouse.md. */
export interface TableAbout {
  description: string;
  /** The spec's section of the resource, e.g. "2.6 Participant". */
  spec: string;
}

export interface DerivedTable {
  table: TableSchema;
  about: TableAbout | undefined;
  /** API field → column, in schema order. */
  fields: readonly { key: string; column: ColumnSchema }[];
  /** A record as a warehouse row: typed columns plus `_raw`. `set` overrides columns. */
  toRow(record: Readonly<Record<string, unknown>>, set?: Readonly<Record<string, unknown>>): Row;
}

/**
 * Derives a warehouse table from an API object schema: one snake_case column
 * per field, typed from the schema. Fields the service adds beyond the schema
 * are kept only in `_raw`.
 *
 * @example
 * const participants = deriveTable("participants", Participant, ["participantId"]);
 */
export function deriveTable(
  name: string,
  schema: z.ZodObject,
  primaryKeyFields: readonly string[],
  about?: TableAbout,
): DerivedTable {
  const fields = Object.entries(schema.shape).map(([key, field]) => {
    // The meaning is the field's `.describe()` in the contract's schema.
    const description = (field as z.ZodType).description;
    return {
      key,
      column: {
        name: snakeCase(key),
        type: columnTypeOf(field as z.ZodType),
        ...(description === undefined ? {} : { description }),
      },
    };
  });
  const primaryKey = primaryKeyFields.map((k) => {
    const f = fields.find((x) => x.key === k);
    if (!f) throw new Error(`${name}: primary key field ${k} is not in the schema`);
    return f.column.name;
  });
  const table: TableSchema = { name, columns: fields.map((f) => f.column), primaryKey };
  return {
    table,
    about,
    fields,
    toRow(record, set) {
      const row: Record<string, unknown> = {};
      for (const f of fields) row[f.column.name] = record[f.key] ?? null;
      if (set) Object.assign(row, set);
      row._raw = record;
      return row;
    },
  };
}
