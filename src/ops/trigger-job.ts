import path from "node:path";
import { z } from "zod";
import { EXPORT_RESOURCES } from "../config/export-job.ts";
import { type JobFile, type RuntimeConfig, readJobFiles } from "../config/index.ts";
import { describeProblems, problemsOf } from "../errors/index.ts";
import { type Enqueued, enqueueExport, enqueueImport, type Queues } from "../queue/index.ts";
import { OpsHttpError, type OpsProblem, opsRefusal } from "./ops-http-error.ts";

/**
 * What a trigger may change of a configured job. Each applies to some kinds
 * only; one given to a kind it does not apply to is refused, not ignored.
 */
export const TriggerOverrides = z
  .object({
    /** import, opt-out: the CSV, an absolute path the workers can read, under an import root (docs/security.md). */
    file: z
      .string()
      .min(1)
      .refine((f) => path.isAbsolute(f), "an absolute path the workers can read")
      .optional(),
    /** import: the study to import into instead of the definition's; export: the one study refreshed in full. */
    study: z.string().min(1).optional(),
    /** export: a subset of the definition's resources. */
    resources: z.array(z.enum(EXPORT_RESOURCES)).min(1).optional(),
    /** import, opt-out: validate and write the requests it would send, send nothing. */
    dryRun: z.boolean().optional(),
    /** import: import again a file the ledger says was imported with this definition. */
    force: z.boolean().optional(),
  })
  .strict();
export type TriggerOverrides = z.infer<typeof TriggerOverrides>;

const APPLIES_TO: Record<keyof TriggerOverrides, readonly string[]> = {
  file: ["import", "opt-out"],
  study: ["import", "export"],
  resources: ["export"],
  dryRun: ["import", "opt-out"],
  force: ["import"],
};

export interface Triggered extends Enqueued {
  queue: "imports" | "exports";
  job: string;
  kind: string;
}

/** The definition files' names as `--job` takes them: the file name without .yaml. */

/** The jobs folder's definitions, for the ops API's listing. */
export async function listJobs(config: RuntimeConfig): Promise<JobFile[]> {
  try {
    return await readJobFiles(config.paths.jobsDir);
  } catch (err) {
    throw new OpsHttpError(
      500,
      "ops_jobs_unreadable",
      `cannot read the jobs folder ${config.paths.jobsDir}: ${err instanceof Error ? err.message : err}`,
    );
  }
}

function invalid(problems: OpsProblem[]): never {
  throw new OpsHttpError(
    400,
    "ops_invalid_overrides",
    `invalid overrides: ${describeProblems(problems)}`,
    problems,
  );
}

/**
 * Enqueues a run of the job definition `name` (jobs/<name>.yaml) with the
 * overrides, exactly as `recruit-sync import|export --job` would, with origin
 * `ops-api`. An unknown name is a 404 that points to `recruit-sync jobs list`.
 */
export async function triggerJob(
  config: RuntimeConfig,
  queues: Queues,
  name: string,
  body: unknown,
): Promise<Triggered> {
  const files = await listJobs(config);
  const file = files.find((f) => f.name === name) ?? files.find((f) => f.ok && f.definition.name === name);
  if (!file) {
    throw new OpsHttpError(
      404,
      "ops_job_unknown",
      `no job definition named ${name} in ${config.paths.jobsDir}: run 'recruit-sync jobs list' to see the jobs`,
    );
  }
  if (!file.ok) {
    throw new OpsHttpError(
      422,
      "ops_job_invalid",
      `job definition ${name} (${file.file}) is invalid: run 'recruit-sync jobs validate'`,
      file.problems,
    );
  }
  const parsed = TriggerOverrides.safeParse(body ?? {});
  if (!parsed.success) {
    invalid(
      problemsOf(parsed.error, {
        root: "(body)",
        message: (i) =>
          i.code === "unrecognized_keys" ? `unknown override ${i.keys.join(", ")}` : undefined,
      }),
    );
  }
  const overrides = parsed.data;
  const kind = file.definition.kind;
  const misplaced = (Object.keys(overrides) as (keyof TriggerOverrides)[])
    .filter((k) => overrides[k] !== undefined && !APPLIES_TO[k].includes(kind))
    .map((k) => ({ path: k, message: `does not apply to a job of kind ${kind}` }));
  if (misplaced.length) invalid(misplaced);

  const job = file.name;
  try {
    if (kind === "export") {
      const enqueued = await enqueueExport(config, queues, {
        job,
        origin: "ops-api",
        ...(overrides.resources ? { resources: overrides.resources } : {}),
        ...(overrides.study ? { studies: [overrides.study] } : {}),
      });
      return { ...enqueued, queue: "exports", job, kind };
    }
    if (!overrides.file) invalid([{ path: "file", message: `a job of kind ${kind} needs the CSV's path` }]);
    const enqueued = await enqueueImport(config, queues, {
      job,
      file: overrides.file,
      origin: "ops-api",
      ...(overrides.study ? { study: overrides.study } : {}),
      ...(overrides.dryRun !== undefined ? { dryRun: overrides.dryRun } : {}),
      ...(overrides.force !== undefined ? { force: overrides.force } : {}),
    });
    return { ...enqueued, queue: "imports", job, kind };
  } catch (err) {
    throw opsRefusal(err, "ops_invalid_overrides");
  }
}
