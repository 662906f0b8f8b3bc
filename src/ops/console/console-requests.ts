import { z } from "zod";
import { type FileJobDefinition, validateFileJobDefinition } from "../../config/import-job.ts";
import { describeProblems, type Problem, problemsOf } from "../../errors/index.ts";
import { OpsHttpError } from "../ops-http-error.ts";
import { UploadId } from "./upload-store.ts";

/** A job definition as the page sends it: an object, checked whole by the import-job schema afterwards. */
const Definition = z.record(z.string(), z.unknown());

/** A job's file name in jobs/ (as `--job` takes it). */
const JobName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9-]*$/, "lower-case letters, digits and dashes, as a job definition's name");

export const UploadParams = z.object({ uploadId: UploadId }).strict();

export const PreviewBody = z.object({ definition: Definition }).strict();

export const RunBody = z
  .object({
    /** The mapping as the page shows it, run without being saved. */
    definition: Definition.optional(),
    /** Or a job definition of jobs/. */
    job: JobName.optional(),
    /** Replaces the definition's study. */
    study: z.string().min(1).max(200).optional(),
    dryRun: z.boolean().optional(),
  })
  .strict()
  .refine((b) => (b.definition === undefined) !== (b.job === undefined), {
    message: "give one of definition (the mapping) or job (a job definition's name)",
    path: ["definition"],
    // Said beside the other problems, not only once they are mended.
    when: (payload) => typeof payload.value === "object" && payload.value !== null,
  });
export type RunBody = z.infer<typeof RunBody>;

export const RunParams = z
  .object({
    queue: z.enum(["imports", "exports"]),
    jobId: z.string().min(1).max(300),
  })
  .strict();

export const RejectsParams = z.object({ jobId: z.string().min(1).max(300) }).strict();

export const SaveJobBody = z
  .object({
    /** Saved as jobs/<name>.yaml. */
    name: JobName,
    definition: Definition,
    /** Replace a job definition of that name. */
    overwrite: z.boolean().default(false),
  })
  .strict();

function invalid(problems: readonly Problem[]): never {
  throw new OpsHttpError(
    400,
    "ops_invalid_request",
    `invalid request: ${describeProblems(problems)}`,
    problems,
  );
}

/** The request's part parsed, or a 400 naming each problem's path. */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, root: string): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  return invalid(
    problemsOf(parsed.error, {
      root,
      message: (i) => (i.code === "unrecognized_keys" ? `unknown field ${i.keys.join(", ")}` : undefined),
    }),
  );
}

/**
 * A definition checked as `recruit-sync jobs validate` checks a file of
 * jobs/: a 400 naming each problem under `definition.`.
 */
export function checkDefinition(raw: Record<string, unknown>): FileJobDefinition {
  const result = validateFileJobDefinition(raw);
  if (result.ok) return result.definition;
  return invalid(
    result.problems.map((p) => ({
      path: p.path ? `definition.${p.path}` : "definition",
      message: p.message,
    })),
  );
}
