import { z } from "zod";
import { EncodingName } from "../config/encoding-name.ts";
import { EXPORT_RESOURCES, PRESET_NAMES } from "../config/job-names.ts";
import { type Problem, problemsOf } from "../errors/index.ts";
import { WarehouseUrl } from "../sinks/warehouse-url.ts";

/** Who asked for a job: people's jobs take the rate budget before scheduled ones. */
export const JobOrigin = z.enum(["cli", "dashboard", "watch", "schedule", "ops-api", "console"]);
export type JobOrigin = z.infer<typeof JobOrigin>;

const name = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._-]+$/, "letters, digits, '.', '_' and '-' only: a job definition's name")
  // A name ending in .yaml is read as a path from the worker's folder (--job takes one): never from job data.
  .refine((n) => !/\.ya?ml$/i.test(n), "a job definition's name, without .yaml: one of jobs/");

/** Where a watched folder's file came from, so the worker can file it in processed/ or failed/. */
export const WatchedFile = z
  .object({
    /** The watched folder, absolute. */
    folder: z.string().min(1),
    /** The file's name as it was dropped (no folders). */
    name: z
      .string()
      .min(1)
      .refine((n) => !/[/\\]/.test(n) && n !== "." && n !== "..", "a file name, not a path"),
  })
  .strict();
export type WatchedFile = z.infer<typeof WatchedFile>;

/**
 * An import job: a definition (a job of jobs/, or a CRM preset and a study)
 * and the file. What the dashboard's "add job" form and `recruit-sync import`
 * both produce; anything else is refused before it runs.
 */
export const ImportJobData = z
  .object({
    kind: z.literal("import"),
    /** jobs/<job>.yaml, kind import or opt-out. */
    job: name.optional(),
    preset: z.enum(PRESET_NAMES).optional(),
    /** A whole import definition (kind import or opt-out), checked at enqueue and run as a jobs/ file is. */
    definition: z.record(z.string(), z.unknown()).optional(),
    /** Replaces the definition's study. */
    study: z.string().min(1).optional(),
    phoneCountry: z
      .string()
      .regex(/^[A-Z]{2}$/, "a two-letter country code such as US")
      .optional(),
    /** Replaces the definition's source.encoding: the file's encoding, or auto to detect it. */
    encoding: EncodingName.optional(),
    /**
     * The CSV file, an absolute path the worker can read: under the console's
     * uploads, a watched folder or `imports.roots`, unless `fileGrant` says
     * the CLI was handed it (src/runtime/import-file-access.ts).
     */
    file: z.string().refine((f) => f.startsWith("/"), "an absolute path"),
    /** Signed with the API token by `recruit-sync import` for the file its user named: a job typed by hand has none. */
    fileGrant: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    dryRun: z.boolean().default(false),
    /** Import again a file the ledger says was imported with this definition. */
    force: z.boolean().default(false),
    /** Send everyone, not only the people whose mapped data changed since the last run. */
    full: z.boolean().default(false),
    origin: JobOrigin.default("dashboard"),
    watched: WatchedFile.optional(),
  })
  .strict()
  .refine((d) => [d.job, d.preset, d.definition].filter((w) => w !== undefined).length === 1, {
    message: "give one of job (a job definition's name), preset or definition",
    path: ["job"],
  })
  .refine((d) => d.preset === undefined || d.study !== undefined, {
    message: "a preset needs study, the study to import into",
    path: ["study"],
  });
export type ImportJobData = z.infer<typeof ImportJobData>;
export type ImportJobDataInput = z.input<typeof ImportJobData>;

/** An export job: a definition of jobs/ (or lists alone) and what stands in for its lists. */
export const ExportJobData = z
  .object({
    kind: z.literal("export"),
    job: name.optional(),
    /**
     * A whole export definition, as a schedule keeps it (schedulers.ts): run
     * instead of the jobs/ file's. Only with `definitionGrant`.
     */
    definition: z.record(z.string(), z.unknown()).optional(),
    /** Signed with the API token by the worker that scheduled `definition`: a definition typed by hand has none. */
    definitionGrant: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    resources: z.array(z.enum(EXPORT_RESOURCES)).optional(),
    studies: z.array(z.string().min(1)).optional(),
    propertyGroups: z.array(z.string().min(1)).optional(),
    /** Read as an import's file is: under the import roots, unless `incentiveIdsGrant` says the CLI was handed it. */
    incentiveIdsFile: z
      .string()
      .refine((f) => f.startsWith("/"), "an absolute path")
      .optional(),
    /** Signed by enqueueExport with the API token: a job typed by hand has none. */
    incentiveIdsGrant: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    /** duckdb:PATH, postgres://… or file:DIR; default the job's sink, else the configured warehouse. */
    warehouse: WarehouseUrl.optional(),
    /** Signed by enqueueExport with the API token: lets `warehouse` name one the definition and config do not. */
    warehouseGrant: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
    origin: JobOrigin.default("dashboard"),
  })
  .strict();
export type ExportJobData = z.infer<typeof ExportJobData>;
export type ExportJobDataInput = z.input<typeof ExportJobData>;

/**
 * Parses a job's data; on failure every problem with its path, so a job added
 * by hand says at once all that is wrong with it.
 */
export function parseJobData<S extends z.ZodType>(
  schema: S,
  data: unknown,
): { ok: true; data: z.infer<S> } | { ok: false; problems: Problem[] } {
  const result = schema.safeParse(data);
  if (result.success) return { ok: true, data: result.data };
  return {
    ok: false,
    problems: problemsOf(result.error, { root: "(data)" }),
  };
}
