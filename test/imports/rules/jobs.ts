import { ImportJobDefinition } from "../../../src/config/import-job.ts";
import {
  type MappedRow,
  mapRow,
  planColumns,
  planRow,
  type RowPlan,
} from "../../../src/imports/rules/index.ts";

/** An import job of study_1 by email, with what a test adds: plain values, no file. */
export function job(extra: Record<string, unknown> = {}): ImportJobDefinition {
  return ImportJobDefinition.parse({ kind: "import", target: { studyId: "study_1" }, ...extra });
}

/** The row plan of a header row under a job, as the read phase makes it once per file. */
export function rowPlan(headers: readonly string[], extra: Record<string, unknown> = {}): RowPlan {
  const def = job(extra);
  return planRow(planColumns(headers, def), def);
}

/** Each row mapped under the header's plan, numbered from 2 as under a header row. */
export function mapRows(
  headers: readonly string[],
  extra: Record<string, unknown>,
  rows: readonly (readonly string[])[],
): MappedRow[] {
  const plan = rowPlan(headers, extra);
  return rows.map((cells, i) => mapRow(plan, cells, i + 2));
}

/** The person of a row that maps; fails the test with the row's issues otherwise. */
export function personOf(mapped: MappedRow | undefined) {
  if (mapped === undefined) throw new Error("no such row");
  if (!mapped.ok) throw new Error(`the row was rejected: ${JSON.stringify(mapped.issues)}`);
  return mapped.person;
}
