import { randomUUID } from "node:crypto";
import { link, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { type RuntimeConfig, readJobFile } from "../../config/index.ts";
import { OpsHttpError } from "../ops-http-error.ts";
import type { SavedJob } from "./api-contract.ts";
import { checkDefinition } from "./console-requests.ts";

/**
 * Saves a mapping as jobs/<name>.yaml, checked as `recruit-sync jobs
 * validate` checks the folder: the definition first, then the file as
 * written, read back. It is written beside and moved into place, so a reader
 * of jobs/ never sees half a file; without `overwrite` an existing job of
 * that name is refused (409), atomically. `name` replaces the definition's.
 */
export async function saveJob(
  config: RuntimeConfig,
  input: { name: string; definition: Record<string, unknown>; overwrite: boolean },
): Promise<SavedJob> {
  // The name it is saved under is its name: a suggestion named after the file gives way.
  const doc = { ...input.definition, name: input.name };
  checkDefinition(doc);
  const jobsDir = path.resolve(config.paths.jobsDir);
  const file = path.join(jobsDir, `${input.name}.yaml`);
  // Not *.yaml: a worker reading jobs/ meanwhile does not take it for a job.
  const draft = path.join(jobsDir, `.${input.name}.${randomUUID()}.draft`);
  const text = `# Saved from the ops console on ${new Date().toISOString()}.\n${stringify(doc)}`;
  await writeFile(draft, text, { flag: "wx" });
  try {
    const read = await readJobFile(draft);
    if (!read.ok) {
      throw new OpsHttpError(422, "ops_job_invalid", `the job as written does not validate`, read.problems);
    }
    if (input.overwrite) {
      const existed = await stat(file).then(
        () => true,
        () => false,
      );
      await rename(draft, file);
      return { name: input.name, file, overwritten: existed };
    }
    try {
      await link(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") {
        throw new OpsHttpError(
          409,
          "ops_job_exists",
          `a job named ${input.name} exists (${file}): send overwrite: true to replace it`,
        );
      }
      throw err;
    }
    return { name: input.name, file, overwritten: false };
  } finally {
    await rm(draft, { force: true });
  }
}
