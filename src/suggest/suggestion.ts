import { z } from "zod";
import {
  ImportJobDefinition,
  type ImportJobDefinitionInput,
  PersonField,
  PropertyTarget,
  Transform,
} from "../config/import-job.ts";
import { PRESET_NAMES } from "../config/job-names.ts";

/** Where a column's suggestion came from, strongest first. */
export const SUGGESTION_SOURCES = ["preset", "header", "values", "property", "none"] as const;

/** One column of the file and what it is suggested to fill: a person field, a property, or nothing. */
export const ColumnSuggestion = z
  .object({
    /** 0-based position in the file. */
    index: z.number().int().min(0),
    /** The header as written, or column1, column2, … in a file without a header row. */
    column: z.string().min(1),
    to: z.union([PersonField, PropertyTarget]).nullable(),
    transforms: z.array(Transform),
    /** How sure the suggestion is, 0 to 1; for a column left unmapped, how sure that it is no person field. */
    confidence: z.number().min(0).max(1),
    why: z.enum(SUGGESTION_SOURCES),
    /** Says why in words; it names headers, never a cell. */
    note: z.string(),
  })
  .strict();
export type ColumnSuggestion = z.infer<typeof ColumnSuggestion>;

/** A definition the import-job schema accepts, in the short form a person writes (defaults left out). */
const ValidDefinition = z.custom<ImportJobDefinitionInput>((v) => ImportJobDefinition.safeParse(v).success, {
  message: "not a valid import job definition",
});

/**
 * What `jobs suggest` prints and the console's mapping page shows: every
 * column with its suggestion, and the job definition that follows, or the
 * problems that keep it from being one (no column for an identifier).
 */
export const MappingSuggestion = z
  .object({
    /** false: the first row held data (an email, a phone), so columns are named column1, column2, … */
    header: z.boolean(),
    preset: z.enum(PRESET_NAMES).nullable(),
    columns: z.array(ColumnSuggestion),
    definition: ValidDefinition.nullable(),
    problems: z.array(z.object({ path: z.string(), message: z.string() }).strict()),
  })
  .strict();
export type MappingSuggestion = z.infer<typeof MappingSuggestion>;
