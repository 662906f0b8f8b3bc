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

/**
 * What a column may be suggested to fill: a person field, `fullName` (split
 * into first and last name by the import, "Last, First" included), or a property.
 */
export const SuggestedTarget = z.union([PersonField, z.literal("fullName"), PropertyTarget]);
export type SuggestedTarget = z.infer<typeof SuggestedTarget>;

/** One column of the file and what it is suggested to fill: a person field, a property, or nothing. */
export const ColumnSuggestion = z
  .object({
    /** 0-based position in the file. */
    index: z.number().int().min(0),
    /** The header as written, or column1, column2, … in a file without a header row. */
    column: z.string().min(1),
    /** When the header repeats: which of the columns so named this is, 1-based (job key columns[].occurrence). */
    occurrence: z.number().int().min(1).optional(),
    to: SuggestedTarget.nullable(),
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

/** The default country of national phone numbers, and a per-row country column, with why. */
export const PhoneCountrySuggestion = z
  .object({
    country: z.string().nullable(),
    column: z.string().nullable(),
    from: z.enum(["option", "numbers", "country column", "email domains", "headers", "none"]),
    reason: z.string(),
  })
  .strict();

/** The identifier chosen, how many sampled people (distinct values) and rows each candidate could import. */
export const IdentifierSuggestion = z
  .object({
    identifier: z.string(),
    rows: z.number().int().min(0),
    counts: z.record(z.string(), z.number().int().min(0)),
    rowCounts: z.record(z.string(), z.number().int().min(0)),
    reason: z.string(),
  })
  .strict();

/** The suggested definition run over the sampled rows through the import's row mapping: nothing sent. */
export const SuggestionOutcome = z
  .object({
    rows: z.number().int().min(0),
    imported: z.number().int().min(0),
    rejected: z.number().int().min(0),
    optedOut: z.number().int().min(0),
    heldBack: z.number().int().min(0),
    droppedValues: z.number().int().min(0),
    topReasons: z.array(z.object({ reason: z.string(), rows: z.number().int().min(1) }).strict()),
    wouldRefuse: z.boolean(),
    stopped: z.string().nullable(),
  })
  .strict();

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
    /** null when no column is mapped to a phone field. */
    phoneCountry: PhoneCountrySuggestion.nullable(),
    /** null when no column can identify a person. */
    identifier: IdentifierSuggestion.nullable(),
    /** null when there is no definition to run. */
    outcome: SuggestionOutcome.nullable(),
    problems: z.array(z.object({ path: z.string(), message: z.string() }).strict()),
  })
  .strict();
export type MappingSuggestion = z.infer<typeof MappingSuggestion>;
