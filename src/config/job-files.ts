import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../errors/index.ts";
import type { Problem } from "../errors/problems.ts";
import { type ExportJobDefinition, validateExportJobDefinition } from "./export-job.ts";
import { type FileJobDefinition, validateFileJobDefinition } from "./import-job.ts";
import { describeYamlError } from "./yaml-error.ts";

export type JobDefinition = FileJobDefinition | ExportJobDefinition;

/**
 * One file of the jobs folder, valid or with every problem found in it.
 * `name` is the file's name without .yaml: what `--job` takes, whatever the
 * definition's own `name:` says.
 */
export type JobFile =
  | { file: string; name: string; ok: true; definition: JobDefinition }
  | { file: string; name: string; ok: false; problems: Problem[] };

/** "ENOENT", "EACCES", …: enough to act on, without a stack. */
function errnoOf(err: unknown): string {
  return (
    (err as NodeJS.ErrnoException | undefined)?.code ?? (err instanceof Error ? err.message : String(err))
  );
}

/**
 * Reads and validates one job definition file. The kind decides the schema;
 * the name defaults to the file name.
 */
export async function readJobFile(file: string): Promise<JobFile> {
  const name = path.basename(file).replace(/\.ya?ml$/, "");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    return { file, name, ok: false, problems: [{ path: "", message: `cannot be read (${errnoOf(err)})` }] };
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    return { file, name, ok: false, problems: [{ path: "", message: describeYamlError(err, text) }] };
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return { file, name, ok: false, problems: [{ path: "", message: "the top level must be a mapping" }] };
  }
  const raw: Record<string, unknown> = { name, ...(doc as Record<string, unknown>) };
  const kind = raw.kind;
  const unknownKind = {
    ok: false as const,
    problems: [{ path: "kind", message: 'must be "import", "opt-out" or "export"' }],
  };
  const result =
    kind === "export"
      ? validateExportJobDefinition(raw)
      : kind === "import" || kind === "opt-out"
        ? validateFileJobDefinition(raw)
        : unknownKind;
  if (!result.ok) return { file, name, ok: false, problems: result.problems };
  return { file, name, ok: true, definition: result.definition };
}

/** Every *.yaml / *.yml file of the jobs folder, sorted by file name. A folder that is not there is a ConfigError naming it. */
export async function readJobFiles(jobsDir: string): Promise<JobFile[]> {
  let entries: string[];
  try {
    entries = await readdir(jobsDir);
  } catch (err) {
    const code = errnoOf(err);
    const what =
      code === "ENOENT"
        ? "does not exist"
        : code === "ENOTDIR"
          ? "is a file, not a folder"
          : `cannot be read (${code})`;
    throw new ConfigError(
      `the jobs folder ${jobsDir} ${what}: give --dir a folder of job definitions (*.yaml), or set paths.jobsDir in config/default.yaml`,
      [],
      { cause: err },
    );
  }
  const files = entries.filter((f) => /\.ya?ml$/.test(f)).sort();
  return Promise.all(files.map((f) => readJobFile(path.join(jobsDir, f))));
}
