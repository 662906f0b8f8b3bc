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
