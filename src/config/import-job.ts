import { isSupportedCountry } from "libphonenumber-js";
import { z } from "zod";
import { SPEC_DEFAULTS } from "../api/decisions.ts";
import { LIST_FIELDS, PERSON_FIELDS } from "../api/schemas/person.ts";
import { type Problem, problemsOf } from "../errors/problems.ts";
import { FULL_NAME, IDENTIFIER_PATTERN, identifierPropertyId, TRANSFORM_WORDS } from "./column-targets.ts";
import { EncodingName } from "./encoding-name.ts";
import { ENCODINGS, PRESET_NAMES } from "./job-names.ts";

/**
 * Job definitions of the file kinds (`jobs/*.yaml`): `kind: import` turns a CSV
 * or CRM export into participant import requests, `kind: opt-out` sets people's
 * opted-out flag from a list. docs/imports.md is the reference for every key.
 */

/** Person fields a column can fill: the import's person object (spec 4.4), from the contract. */
export { LIST_FIELDS, PERSON_FIELDS };
export const PersonField = z.enum(PERSON_FIELDS);
export type PersonField = z.infer<typeof PersonField>;
/** Person fields several columns may fill: the first valid value of a row is the field's, the rest its list's. */
export const SHARED_FIELDS: readonly PersonField[] = ["email", "phone"];
/** The only person fields the service lets a null overwrite (spec 4.4 rule 3). */
export const NULLABLE_FIELDS: readonly PersonField[] = ["firstName", "lastName"];

export { ENCODINGS, EncodingName };
export const DELIMITERS = ["auto", ",", ";", "tab"] as const;
/** What a failing value of an optional field does to its row. */
export const INVALID_OPTIONAL_POLICIES = ["reject", "drop"] as const;
export type InvalidOptionalPolicy = (typeof INVALID_OPTIONAL_POLICIES)[number];
export { PRESET_NAMES };
export type PresetName = (typeof PRESET_NAMES)[number];

/**
 * Tokens of a date format: YYYY, YY, M, MM, MMM (Jan), MMMM (January), D, DD,
 * and time parts that are read and dropped (H, HH, h, hh, mm, ss, A). Anything
 * else is literal. `iso` accepts an ISO 8601 date or date-time.
 */
const DATE_TOKEN = /YYYY|YY|MMMM|MMM|MM|M|DD|D|HH|H|hh|h|mm|ss|A/g;
export const DateFormat = z
  .string()
  .min(1)
  .refine((f) => f === "iso" || /YY/.test(f), {
    message: 'a date format needs a year (YYYY or YY), or is "iso"',
  })
  .refine((f) => f === "iso" || /M/.test(f.replace(DATE_TOKEN, (t) => (t.startsWith("M") ? "M" : ""))), {
    message: "a date format needs a month (M, MM, MMM or MMMM)",
  })
  .refine((f) => f === "iso" || /D/.test(f.replace(DATE_TOKEN, (t) => (t.startsWith("D") ? "D" : ""))), {
    message: "a date format needs a day (D or DD)",
  });

export const CountryCode = z
  .string()
  .transform((c) => c.toUpperCase())
  .refine((c) => isSupportedCountry(c), {
    message: "not a country code libphonenumber knows (ISO 3166 alpha-2)",
  });

export { FULL_NAME, TRANSFORM_WORDS };

// YAML reads unquoted true, false and numbers as such; they are words here.
const Word = z.union([z.string().min(1), z.boolean(), z.number()]).transform((w) => String(w));
const WordList = z.array(Word).min(1);
export const Transform = z.union([
  z.enum(TRANSFORM_WORDS, { error: `unknown transform; one of ${TRANSFORM_WORDS.join(", ")}` }),
  z.object({ case: z.enum(["lower", "upper", "title"]) }).strict(),
  z.object({ date: z.union([DateFormat, z.array(DateFormat).min(1)]) }).strict(),
  z
    .object({
      boolean: z
        .object({ true: WordList.optional(), false: WordList.optional(), negate: z.boolean().optional() })
        .strict(),
    })
    .strict(),
  z.object({ phone: CountryCode }).strict(),
  z.object({ split: z.string().min(1) }).strict(),
]);
export type Transform = z.infer<typeof Transform>;

export const PropertyTarget = z.union([
  z.object({ propertyId: z.string().min(1) }).strict(),
  z.object({ name: z.string().min(1), propertyType: z.string().min(1) }).strict(),
]);
export type PropertyTarget = z.infer<typeof PropertyTarget>;

/** Where a column goes: a person field, `fullName`, or a property. */
export const ColumnTarget = z.union([PersonField, z.literal(FULL_NAME), PropertyTarget]);
export type ColumnTarget = z.infer<typeof ColumnTarget>;

export const ColumnMapping = z
  .object({
    /**
     * The header as written in the file; matched ignoring case, spaces and
     * punctuation. Optional with `position`, where it is a label that must
     * match the header there (when the file has a header row).
     */
    column: z.string().min(1).optional(),
    /** Which of the columns named `column` (1-based), when the file repeats the name. */
    occurrence: z.number().int().min(1).optional(),
    /** The column's place in the file (1-based): the way to name a column whose header repeats. */
    position: z.number().int().min(1).optional(),
    to: ColumnTarget,
    transforms: z.array(Transform).default([]),
    /**
     * What an empty cell sends: `omit` leaves the stored value alone; `null`
     * sends null, which OVERWRITES a stored first or last name or property on
     * the service (spec 4.4 rule 3). Only firstName, lastName and properties take null.
     */
    empty: z.enum(["omit", "null"]).default("omit"),
  })
  .strict()
  .refine((c) => c.column !== undefined || c.position !== undefined, {
    message: "name the column: column: <header>, or position: <its number, 1 for the first>",
    path: ["column"],
  })
  .refine((c) => c.occurrence === undefined || c.position === undefined, {
    message: "give occurrence or position, not both",
    path: ["occurrence"],
  })
  .refine((c) => c.occurrence === undefined || c.column !== undefined, {
    message: "occurrence counts the columns named by column: give column too",
    path: ["occurrence"],
  });
export type ColumnMapping = z.infer<typeof ColumnMapping>;

export const SourceOptions = z
  .object({
    encoding: EncodingName.default("auto"),
    delimiter: z.enum(DELIMITERS).default("auto"),
    /** false: no header row; columns are then named column1, column2, … */
    header: z.boolean().default(true),
    /** Records above the header (report titles) that are not data. */
    skipRows: z.number().int().min(0).default(0),
    /** A longer cell rejects its row (it is kept whole in the rejects file). */
    maxFieldLength: z.number().int().min(1).default(65_536),
    /** A longer record stops the run: it is almost always an unclosed quote swallowing the file. */
    maxRecordBytes: z
      .number()
      .int()
      .min(1024)
      .default(64 * 1024 * 1024),
  })
  .strict();
export type SourceOptions = z.infer<typeof SourceOptions>;

/** `email`, `phone` or `property:<propertyId>` of a unique property. */
export const IdentifierSpec = z
  .string()
  .regex(IDENTIFIER_PATTERN, { message: "must be email, phone or property:<propertyId>" });

export const PopulationSpec = z.union([
  z.object({ id: z.string().min(1) }).strict(),
  z
    .object({
      column: z.string().min(1),
      /** Cell value (matched trimmed, ignoring case) → population id. */
      values: z.record(z.string(), z.string().min(1)),
      /** Unlisted or empty values: a population id, null for none, or absent to reject the row. */
      default: z.string().min(1).nullable().optional(),
    })
    .strict(),
]);
export type PopulationSpec = z.infer<typeof PopulationSpec>;

/** Largest batch the service takes by our reading of the spec (docs/spec-decisions.md). */
export const MAX_BATCH_SIZE = SPEC_DEFAULTS.maxPeoplePerImport;
export const DEFAULT_BATCH_SIZE = 500;

const JobCommon = {
  /** Defaults to the file name without .yaml. */
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, { message: "lower-case letters, digits and dashes" })
    .optional(),
  description: z.string().optional(),
  source: SourceOptions.prefault({}),
};

export const ImportJobDefinition = z
  .object({
    kind: z.literal("import"),
    ...JobCommon,
    /** Standard columns of a CRM export mapped by header; `columns` add to and override it. */
    preset: z.enum(PRESET_NAMES).optional(),
    target: z
      .object({
        studyId: z.string().min(1),
        identifier: IdentifierSpec.default("email"),
        population: PopulationSpec.optional(),
      })
      .strict(),
    columns: z.array(ColumnMapping).default([]),
    /** Columns known to be irrelevant: listed in the report as ignored rather than unmapped. */
    ignoreColumns: z.array(z.string().min(1)).default([]),
    /** `properties` sends every unmapped column as a STRING property named after its header. */
    unmapped: z.enum(["report", "properties"]).default("report"),
    /** Default country of `phone` transforms that name none (ISO 3166 alpha-2). */
    phoneCountry: CountryCode.optional(),
    /**
     * The header of a column giving each row's country for its national phone
     * numbers (`DE`, `Germany`, `Deutschland`, `+49`); a row whose cell is
     * empty or unknown falls back to `phoneCountry`.
     */
    phoneCountryColumn: z.string().min(1).optional(),
    /**
     * A value that fails in a column other than the identifier's: `drop`
     * (the default) imports the person without it and lists it in the report
     * and the warnings file; `reject` rejects the row. Absent means drop, and
     * is left absent so that definitions written before the key keep their
     * hash, and with it their ledger (docs/spec-decisions.md).
     */
    invalidOptionalValues: z.enum(INVALID_OPTIONAL_POLICIES).optional(),
    /**
     * A column mapped to isOptedOut that says "no" (false): `hold` (the
     * default) does not send it, so a person who opted out of research is
     * never opted back in by a CRM export; `allow` sends it. Absent means
     * hold, and is left absent so that older definitions keep their hash.
     */
    optIn: z.enum(["hold", "allow"]).optional(),
    /**
     * false sends everyone at every run, as `import --full` does; absent or
     * true sends only the people whose mapped data differs from what the last
     * successful run sent, and the new ones (docs/imports.md, change-only
     * re-imports). Absent is left absent so that older definitions keep their hash.
     */
    changesOnly: z.boolean().optional(),
    batchSize: z.number().int().min(1).max(MAX_BATCH_SIZE).default(DEFAULT_BATCH_SIZE),
  })
  .strict()
  .superRefine((def, ctx) => {
    const scalarSeen = new Map<string, number>();
    def.columns.forEach((c, i) => {
      if (c.to === "isOptedOut") refuseSubscribedAsOptedOut(c.transforms, i, ctx);
      if (c.to === FULL_NAME) {
        const first = scalarSeen.get(FULL_NAME);
        if (first !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["columns", i, "to"],
            message: `fullName is already filled by columns.${first}`,
          });
        } else scalarSeen.set(FULL_NAME, i);
        if (c.empty === "null") {
          ctx.addIssue({
            code: "custom",
            path: ["columns", i, "empty"],
            message: "null is only allowed for firstName, lastName and properties, not fullName",
          });
        }
      } else if (typeof c.to === "string") {
        if (c.empty === "null" && !NULLABLE_FIELDS.includes(c.to)) {
          ctx.addIssue({
            code: "custom",
            path: ["columns", i, "empty"],
            message: `null is only allowed for firstName, lastName and properties, not ${c.to}`,
          });
        }
        // Several columns may fill email or phone: the first valid value of a row is the field's,
        // the others go to its additional list (docs/imports.md, "Several email or phone columns").
        if (!LIST_FIELDS.includes(c.to) && !SHARED_FIELDS.includes(c.to)) {
          const first = scalarSeen.get(c.to);
          if (first !== undefined) {
            ctx.addIssue({
              code: "custom",
              path: ["columns", i, "to"],
              message: `${c.to} is already filled by columns.${first}`,
            });
          } else scalarSeen.set(c.to, i);
        }
      }
    });
    const identifier = def.target.identifier;
    const id = identifierPropertyId(identifier);
    if (id !== undefined) {
      const mapped = def.columns.some(
        (c) => typeof c.to === "object" && "propertyId" in c.to && c.to.propertyId === id,
      );
      if (!mapped) {
        ctx.addIssue({
          code: "custom",
          path: ["target", "identifier"],
          message: `no column is mapped to property ${id}; add one with to: {propertyId: ${id}}`,
        });
      }
    } else if (def.preset === undefined && !def.columns.some((c) => c.to === identifier)) {
      ctx.addIssue({
        code: "custom",
        path: ["target", "identifier"],
        message: `no column is mapped to ${identifier}, the identifier; map one or use a preset`,
      });
    }
  });
export type ImportJobDefinition = z.infer<typeof ImportJobDefinition>;

/** Words that say a person subscribed or consented: never read as "opted out". */
export const CONSENTED_WORDS = [
  "subscribed",
  "subscriber",
  "opted in",
  "opt in",
  "optin",
  "opted-in",
  "opt-in",
  "consented",
  "consent given",
  "angemeldet",
  "abonniert",
  "suscrito",
  "suscrita",
  "abonne",
  "abonné",
  "inscrit",
] as const;

/**
 * A boolean transform on an isOptedOut column whose true words (after
 * `negate`) include "subscribed" would opt out the people who subscribed:
 * refused where the definition is checked, whatever else it says.
 */
function refuseSubscribedAsOptedOut(transforms: readonly Transform[], i: number, ctx: z.RefinementCtx): void {
  transforms.forEach((t, k) => {
    if (typeof t !== "object" || !("boolean" in t)) return;
    const b = t.boolean;
    // Default lists are cleared of these words where they are compiled (transforms/consent.ts).
    const trueWords = b.negate ? b.false : b.true;
    if (trueWords === undefined) return;
    const consenting = trueWords.find((w) =>
      (CONSENTED_WORDS as readonly string[]).includes(w.trim().toLowerCase().replace(/\s+/g, " ")),
    );
    if (consenting !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["columns", i, "transforms", k, "boolean"],
        message: `reads "${consenting}" as opted out (isOptedOut true); a subscribed person is not opted out: move it to the other list, or drop the lists to read consent words by their meaning`,
      });
    }
  });
}
export type ImportJobDefinitionInput = z.input<typeof ImportJobDefinition>;

export const OptOutJobDefinition = z
  .object({
    kind: z.literal("opt-out"),
    ...JobCommon,
    /** The column of emails or person ids; by default the one headed email, person id or id, else the first. */
    column: z.string().min(1).optional(),
    /** false opts the listed people back in. */
    optedOut: z.boolean().default(true),
    /** Requests in flight at once; the rate governor still paces them. */
    concurrency: z.number().int().min(1).max(16).default(4),
  })
  .strict();
export type OptOutJobDefinition = z.infer<typeof OptOutJobDefinition>;

/** Every job definition kind that reads a file. */
export const FileJobDefinition = z.discriminatedUnion("kind", [ImportJobDefinition, OptOutJobDefinition]);
export type FileJobDefinition = z.infer<typeof FileJobDefinition>;

export type DefinitionResult<T> = { ok: true; definition: T } | { ok: false; problems: Problem[] };

/**
 * Validates a parsed YAML document as an import or opt-out job definition and
 * returns every problem with its path, not just the first.
 *
 * @example
 * const result = validateFileJobDefinition(parseYaml(text));
 * if (!result.ok) for (const p of result.problems) console.log(`${p.path}: ${p.message}`);
 */
export function validateFileJobDefinition(raw: unknown): DefinitionResult<FileJobDefinition> {
  const kind = typeof raw === "object" && raw !== null ? (raw as { kind?: unknown }).kind : undefined;
  if (kind !== "import" && kind !== "opt-out") {
    return { ok: false, problems: [{ path: "kind", message: 'must be "import" or "opt-out"' }] };
  }
  const parsed = FileJobDefinition.safeParse(raw);
  return parsed.success
    ? { ok: true, definition: parsed.data }
    : { ok: false, problems: problemsOf(parsed.error) };
}

/** As validateFileJobDefinition, for `kind: import` only. */
export function validateImportJobDefinition(raw: unknown): DefinitionResult<ImportJobDefinition> {
  const parsed = ImportJobDefinition.safeParse(raw);
  return parsed.success
    ? { ok: true, definition: parsed.data }
    : { ok: false, problems: problemsOf(parsed.error) };
}
