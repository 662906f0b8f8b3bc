import { readFile } from "node:fs/promises";
import path from "node:path";
import { CronExpressionParser } from "cron-parser";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { SPEC_DEFAULTS } from "../api/decisions.ts";
import { type Problem, problemsOf } from "../errors/problems.ts";
import { WarehouseUrl } from "../sinks/warehouse-url.ts";
import { EXPORT_RESOURCES } from "./job-names.ts";
import { describeYamlError } from "./yaml-error.ts";

/**
 * Job definitions of `kind: export` (`jobs/*.yaml`): which resources to page
 * into which warehouse, and when. docs/exports.md is the reference for every key.
 */

export { EXPORT_RESOURCES };
export const ExportResource = z.enum(EXPORT_RESOURCES);
export type ExportResource = z.infer<typeof ExportResource>;

const Id = z.string().min(1, { message: "an id cannot be empty" });
/** The largest page the service's searches give (docs/spec-decisions.md). */
const MAX_PAGE_SIZE = SPEC_DEFAULTS.maxSearchPageSize;

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export const ExportSchedule = z
  .object({
    /** Five fields (minute hour day month weekday), or six with seconds first. */
    cron: z.string().min(1),
    /** IANA time zone the cron is read in. */
    timezone: z.string().default("UTC"),
  })
  .strict()
  .superRefine((s, ctx) => {
    const tzOk = isTimeZone(s.timezone);
    if (!tzOk)
      ctx.addIssue({ code: "custom", path: ["timezone"], message: `unknown time zone "${s.timezone}"` });
    try {
      CronExpressionParser.parse(s.cron, tzOk ? { tz: s.timezone } : {});
    } catch (err) {
      ctx.addIssue({
        code: "custom",
        path: ["cron"],
        message: `not a cron expression: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
  });
export type ExportSchedule = z.infer<typeof ExportSchedule>;

export const IncentiveSources = z
  .object({
    /** Incentive ids listed in the definition. */
    ids: z.array(Id).default([]),
    /** A CSV file of ids: a column named incentiveId / incentive_id / id, or the first column. */
    idsFile: z.string().min(1).optional(),
    /** Also re-read the ids already in the warehouse that are not yet final. */
    fromWarehouse: z.boolean().default(true),
  })
  .strict();
export type IncentiveSources = z.infer<typeof IncentiveSources>;

export const EmailExportOptions = z
  .object({
    /** Days of history the first run loads. */
    backfillDays: z.number().int().min(1).max(3650).default(30),
    /** Each run reaches back this far behind the newest sentAt loaded, for records that arrive late. */
    lookbackHours: z
      .number()
      .int()
      .min(0)
      .max(24 * 90)
      .default(48),
    studyId: Id.optional(),
    teamId: Id.optional(),
    userId: Id.optional(),
    populationId: Id.optional(),
  })
  .strict();
export type EmailExportOptions = z.infer<typeof EmailExportOptions>;

export const ExportJobDefinition = z
  .object({
    kind: z.literal("export"),
    /** Defaults to the file name without .yaml. */
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]*$/, { message: "lowercase letters, digits, - and _ only" })
      .optional(),
    description: z.string().optional(),
    /** Resources to export; all of them when omitted. */
    resources: z
      .array(ExportResource)
      .min(1)
      .refine((r) => new Set(r).size === r.length, { message: "a resource is listed twice" })
      .default([...EXPORT_RESOURCES]),
    /** Studies whose participants are exported. */
    studies: z.array(Id).default([]),
    /** Property groups whose person properties are exported. */
    propertyGroups: z.array(Id).default([]),
    incentives: IncentiveSources.prefault({}),
    emails: EmailExportOptions.prefault({}),
    /** Records per request (the service's maximum is 100). */
    pageSize: z.number().int().min(1).max(MAX_PAGE_SIZE).default(MAX_PAGE_SIZE),
    /**
     * Keep versions of participants and person properties (participants_history,
     * person_properties_history) beside the tables, which hold only the last state.
     */
    history: z.boolean().default(false),
    schedule: ExportSchedule.optional(),
    /** Warehouse URL; when absent, RECRUIT_SYNC_WAREHOUSE or the embedded default. */
    sink: WarehouseUrl.optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.resources.includes("participants") && d.studies.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["studies"],
        message: "exporting participants needs at least one study",
      });
    }
    if (d.resources.includes("person_properties") && d.propertyGroups.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["propertyGroups"],
        message: "exporting person_properties needs at least one property group",
      });
    }
    const inc = d.incentives;
    if (d.resources.includes("incentives") && inc.ids.length === 0 && !inc.idsFile && !inc.fromWarehouse) {
      ctx.addIssue({
        code: "custom",
        path: ["incentives"],
        message: "exporting incentives needs a source: ids, idsFile or fromWarehouse: true",
      });
    }
  });
export type ExportJobDefinition = z.infer<typeof ExportJobDefinition>;
export type ExportJobDefinitionInput = z.input<typeof ExportJobDefinition>;

export type ExportDefinitionResult =
  | { ok: true; definition: ExportJobDefinition }
  | { ok: false; problems: Problem[] };

/**
 * Validates a parsed YAML document as an export job definition and returns
 * every problem with its path, not just the first.
 *
 * @example
 * const result = validateExportJobDefinition(parseYaml(text));
 * if (!result.ok) for (const p of result.problems) console.log(`${p.path}: ${p.message}`);
 */
export function validateExportJobDefinition(raw: unknown): ExportDefinitionResult {
  const parsed = ExportJobDefinition.safeParse(raw);
  if (parsed.success) return { ok: true, definition: parsed.data };
  return {
    ok: false,
    problems: problemsOf(parsed.error),
  };
}

/** Where `--job NAME` looks: `NAME` as a path when it names a file, else `<jobsDir>/NAME.yaml`. */
export function exportJobPath(nameOrPath: string, jobsDir = path.resolve("jobs")): string {
  if (/\.ya?ml$/.test(nameOrPath) || nameOrPath.includes("/")) return path.resolve(nameOrPath);
  return path.join(jobsDir, `${nameOrPath}.yaml`);
}

export type ReadJobResult =
  | { ok: true; raw: Record<string, unknown>; file: string }
  | { ok: false; file: string; problems: Problem[] };

/**
 * Reads a job file as YAML without validating it, so that command-line flags
 * can replace parts of it first. The name defaults to the file's.
 */
export async function readExportJobFile(nameOrPath: string, jobsDir?: string): Promise<ReadJobResult> {
  const file = exportJobPath(nameOrPath, jobsDir);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such job file" : String(err);
    return { ok: false, file, problems: [{ path: "", message: why }] };
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    return { ok: false, file, problems: [{ path: "", message: describeYamlError(err, text) }] };
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return { ok: false, file, problems: [{ path: "", message: "the top level must be a mapping" }] };
  }
  const raw = { ...(doc as Record<string, unknown>) };
  if (raw.name === undefined) raw.name = path.basename(file).replace(/\.ya?ml$/, "");
  return { ok: true, raw, file };
}
