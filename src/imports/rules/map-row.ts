import type { ImportJobDefinition } from "../../config/import-job.ts";
import { assemblePerson } from "./assemble-person.ts";
import type { ColumnPlan } from "./column-plan.ts";
import type { MappedRow } from "./mapped-row.ts";
import { resolvePopulation, unknownPopulation } from "./resolve-population.ts";
import { planRow, type RowPlan } from "./row-plan.ts";
import { noteBlockingProblem, settleRow } from "./settle-problems.ts";

/**
 * Maps one row of the file to a person, in the steps each module does
 * alone: the row's width checked, each cell read and the person assembled
 * (assemble-person.ts, read-cell.ts), the population resolved
 * (resolve-population.ts), then the problems settled against the contract's
 * ImportPerson (settle-problems.ts). `plan` comes from planRow, once per file.
 */
export function mapRow(plan: RowPlan, cellsIn: readonly string[], row: number): MappedRow {
  let cells = cellsIn;
  if (isShortRow(plan.width, cells)) cells = padShortRow(plan.width, cells);
  else if (cells.length !== plan.width && !trailingEmptyCell(plan.width, cells)) {
    const extra =
      cells.length === plan.width + 1 ? ", and its last cell, which has no header, is not empty" : "";
    return {
      ok: false,
      issues: [
        {
          code: "ragged_row",
          path: [],
          message: `row has ${cells.length} cells, the header has ${plan.width}${extra}`,
          row,
        },
      ],
    };
  }
  const draft = assemblePerson(plan, cells, row);
  const population = resolvePopulation(plan.population, cells);
  if (population === undefined) {
    draft.problems = noteBlockingProblem(
      draft.problems,
      unknownPopulation(plan.population, plan.headers, row),
    );
  }
  return settleRow(plan, draft, population ?? null, row, cellsIn.length);
}

/**
 * A row with fewer cells than the header, read as if the missing trailing
 * cells were empty: many exporters (Outlook, Google's Outlook CSV) leave out
 * the empty cells at the end of a row. The read phase counts such rows
 * (chunk-mapper.ts, ROW_SHORT); a row with more cells stays rejected. A line
 * without a single delimiter is not one: it is a report's footer or a note
 * ("Confidential Information - Do Not Distribute" under a Salesforce
 * report), which would otherwise fill the first column, and stays rejected.
 */
export function isShortRow(width: number, cells: readonly string[]): boolean {
  return cells.length < width && cells.length > 1;
}

/** The row's cells with empty ones added up to the header's width. */
export function padShortRow(width: number, cells: readonly string[]): string[] {
  const out = new Array<string>(width);
  for (let i = 0; i < width; i++) out[i] = i < cells.length ? (cells[i] as string) : "";
  return out;
}

/**
 * A row with one cell more than the header, that cell empty: a delimiter at
 * the end of every row (Outlook's CSV), read as if it were not there.
 */
function trailingEmptyCell(width: number, cells: readonly string[]): boolean {
  if (cells.length !== width + 1) return false;
  const last = cells[width] as string;
  return last.length === 0 || last.trim() === "";
}

/**
 * The mapper from a file's cells to a person under one column plan and
 * definition: planRow once, then mapRow for every row.
 */
export function createRowMapper(plan: ColumnPlan, def: ImportJobDefinition): RowMapper {
  const rowPlan = planRow(plan, def);
  return (cells, row) => mapRow(rowPlan, cells, row);
}

export type RowMapper = (cells: readonly string[], row: number) => MappedRow;
