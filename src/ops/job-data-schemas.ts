import path from "node:path";
import { z } from "zod";
import { type RuntimeConfig, readJobFiles } from "../config/index.ts";
import { ExportJobData, ImportJobData, QUEUE_NAMES } from "../queue/index.ts";

export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** Each queue's job-data schema: what the dashboard's "add job" form must produce. */
export const JOB_DATA_SCHEMAS = {
  [QUEUE_NAMES.imports]: ImportJobData,
  [QUEUE_NAMES.exports]: ExportJobData,
} as const satisfies Record<QueueName, z.ZodType>;

/**
 * A job data to start from in the "add job" form: the first definition of
 * jobs/ of the queue's kind, so the form opens on something that runs (an
 * import still needs the file's path). Falls back to the schema's template
 * when jobs/ has none.
 */
async function examplesFor(config: RuntimeConfig): Promise<Record<QueueName, unknown[]>> {
  const files = await readJobFiles(config.paths.jobsDir).catch(() => []);
  // `job` takes the file's name, as `--job` does.
  const valid = files.flatMap((f) =>
    f.ok ? [{ ...f, name: path.basename(f.file).replace(/\.ya?ml$/, "") }] : [],
  );
  const anImport = valid.find((f) => f.definition.kind === "import");
  const anExport = valid.find((f) => f.definition.kind === "export");
  return {
    imports: anImport
      ? [
          {
            kind: "import",
            job: anImport.name,
            // A file the worker may read: under imports.roots, else a watched folder, else the uploads.
            file: path.join(
              config.imports.roots[0] ??
                config.watch[0]?.folder ??
                path.join(config.paths.dataDir, "uploads"),
              "contacts.csv",
            ),
            dryRun: false,
            origin: "dashboard",
          },
        ]
      : [],
    exports: anExport ? [{ kind: "export", job: anExport.name, origin: "dashboard" }] : [],
  };
}

/**
 * The JSON Schemas bull-board shows and checks the "add job" form against,
 * from the same zod schemas the workers parse job data with (input side:
 * defaulted fields are optional).
 */
export async function jobDataJsonSchemas(config: RuntimeConfig): Promise<Record<QueueName, object>> {
  const examples = await examplesFor(config);
  const build = (name: QueueName) => {
    const schema = z.toJSONSchema(JOB_DATA_SCHEMAS[name], { io: "input" });
    return examples[name].length ? { ...schema, examples: examples[name] } : schema;
  };
  return { imports: build("imports"), exports: build("exports") };
}
