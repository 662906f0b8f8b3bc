import path from "node:path";
import type { Command } from "commander";
import type { JobDefinition, JobFile } from "../../config/index.ts";
import { ConfigError } from "../../errors/index.ts";
import { registerJobsSuggest } from "./jobs-suggest.ts";

// The configuration and the job schemas (yaml, zod) load when a subcommand runs, not when the CLI starts.
const loadConfigModule = () => import("../../config/index.ts");

async function jobsDirOf(opts: { dir?: string }): Promise<string> {
  if (opts.dir) return path.resolve(opts.dir);
  const { loadConfig } = await loadConfigModule();
  return path.resolve(loadConfig().paths.jobsDir);
}

/** A subcommand that reads every job definition of the jobs folder (--dir, else the config's) and reports on them. */
function addFolderCommand(
  jobs: Command,
  name: string,
  description: string,
  report: (files: JobFile[], dir: string) => void,
): void {
  jobs
    .command(name)
    .description(description)
    .option("--dir <dir>", "the jobs folder (default: paths.jobsDir of the config)")
    .action(async (opts: { dir?: string }) => {
      const { readJobFiles } = await loadConfigModule();
      const dir = await jobsDirOf(opts);
      report(await readJobFiles(dir), dir);
    });
}

function summary(d: JobDefinition): string {
  switch (d.kind) {
    case "import":
      return `study ${d.target.studyId}${d.preset ? `, preset ${d.preset}` : ""}`;
    case "opt-out":
      return "opt-out list";
    case "export":
      return `${d.resources.join(", ")}${d.schedule ? `; ${d.schedule.cron} (${d.schedule.timezone})` : ""}`;
  }
}

/** `recruit-sync jobs list`, `recruit-sync jobs validate` and `recruit-sync jobs suggest`. */
export function registerJobsCommand(program: Command): void {
  const jobs = program
    .command("jobs")
    .description("list and validate the job definitions in jobs/, and suggest one for a file")
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync jobs list                    # name, kind and what each does; exit 2 if any is invalid
  recruit-sync jobs validate                # every problem of every file, with its path
  recruit-sync jobs validate --dir ./staging-jobs
  recruit-sync jobs suggest export.csv --name crm-contacts   # an import definition for a file, as YAML`,
    );

  addFolderCommand(
    jobs,
    "list",
    "one line per job definition: name, kind and what it does; exits 2 if any is invalid",
    (files) => {
      for (const f of files) {
        // The file's name is what --job takes; a definition that names itself otherwise says so.
        const own =
          f.ok && f.definition.name && f.definition.name !== f.name ? ` (named ${f.definition.name})` : "";
        const line = f.ok
          ? `${f.name.padEnd(28)} ${f.definition.kind.padEnd(8)} ${summary(f.definition)}${own}`
          : `${f.name.padEnd(28)} INVALID  run 'recruit-sync jobs validate' for details`;
        process.stdout.write(`${line}\n`);
      }
      if (files.length === 0) process.stdout.write("no job definitions found\n");
      // The list is still printed in full: the exit code is what a script or CI reads.
      const invalid = files.filter((f) => !f.ok).length;
      if (invalid > 0) {
        throw new ConfigError(
          `${invalid} of ${files.length} job definitions are invalid: run 'recruit-sync jobs validate' for each problem`,
        );
      }
    },
  );

  addFolderCommand(
    jobs,
    "validate",
    "checks every job definition and prints each problem with its path",
    (files, dir) => {
      let invalid = 0;
      for (const f of files) {
        const rel = path.relative(process.cwd(), f.file);
        if (f.ok) {
          process.stdout.write(`ok       ${rel}\n`);
          continue;
        }
        invalid++;
        for (const p of f.problems)
          process.stdout.write(`invalid  ${rel}: ${p.path || "(top)"}: ${p.message}\n`);
      }
      if (invalid > 0) {
        throw new ConfigError(`${invalid} of ${files.length} job definitions in ${dir} are invalid`);
      }
    },
  );

  registerJobsSuggest(jobs);
}
