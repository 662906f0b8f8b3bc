import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import {
  type FileJobDefinition,
  type ImportJobDefinition,
  type OptOutJobDefinition,
  validateFileJobDefinition,
} from "../../src/config/import-job.ts";

export const ROOT = path.resolve(import.meta.dirname, "../..");

export function loadJob(name: string): FileJobDefinition {
  const result = validateFileJobDefinition(
    parse(readFileSync(path.join(ROOT, "jobs", `${name}.yaml`), "utf8")),
  );
  if (!result.ok) throw new Error(`jobs/${name}.yaml: ${JSON.stringify(result.problems)}`);
  return result.definition;
}

export function loadImportJob(name: string): ImportJobDefinition {
  const def = loadJob(name);
  if (def.kind !== "import") throw new Error(`jobs/${name}.yaml is not an import`);
  return def;
}

export function loadOptOutJob(name: string): OptOutJobDefinition {
  const def = loadJob(name);
  if (def.kind !== "opt-out") throw new Error(`jobs/${name}.yaml is not an opt-out`);
  return def;
}

export const sample = (name: string) => path.join(ROOT, "samples", name);

/** What test/imports/kill-child.ts takes as its JSON argument. */
export interface KillChildArgs {
  file: string;
  definition: unknown;
  baseUrl: string;
  token: string;
  redisUrl: string;
  prefix: string;
  rejectsFile: string;
  workDir: string;
  /** Batches answered before the child SIGKILLs itself. */
  killAfter: number;
  /** Keep the change-only state under the same prefix. */
  changes?: boolean;
}

/** Runs an import in a child process that kills itself (kill-child.ts); resolves to the signal it died of. */
export function runKillChild(args: KillChildArgs): Promise<NodeJS.Signals | null> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "test/imports/kill-child.ts"), JSON.stringify(args)],
    { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] },
  );
  return new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
}
