import type { RowProblem } from "../row-problem.ts";
import type { ColumnStep } from "./row-plan.ts";
import { type CellValue, fail, isFailure } from "./transforms/cell-value.ts";

/** Characters a decoded CSV cell should never hold: a wrong encoding or binary bytes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const GARBAGE = /[\u0000-\u0008\u000B\u000E-\u001F]/;

/**
 * What one cell gives its column: a value; null (an empty cell of an
 * `empty: null` column); undefined (empty: the field is left out); or a
 * failure, the column's problem (its message never quotes the cell).
 */
export type CellRead = CellValue | null | undefined | RowProblem;

/** Whether a cell's read is a failure (null, which isFailure would take for one, is not). */
export function cellFailed(read: CellRead): read is RowProblem {
  return read !== null && read !== undefined && isFailure(read);
}

/**
 * Step 2, read a cell: too long or holding control characters fails; else
 * it is trimmed and goes through the column's transforms, and what they
 * leave empty counts as empty.
 */
export function readCell(
  step: ColumnStep,
  raw: string,
  maxFieldLength: number,
  transform: ColumnStep["transform"] = step.transform,
): CellRead {
  if (raw.length > maxFieldLength) {
    return fail("field_too_long", `value is ${raw.length} characters long; the limit is ${maxFieldLength}`);
  }
  const cell = raw.trim();
  let value: CellValue | undefined;
  if (cell === "") value = undefined;
  else if (GARBAGE.test(cell)) {
    return fail("invalid_characters", "holds control characters or undecodable bytes (wrong encoding?)");
  } else {
    const v = transform(cell);
    if (isFailure(v)) return v;
    value = v === "" || (Array.isArray(v) && v.length === 0) ? undefined : v;
  }
  if (value === undefined) return step.nullOnEmpty ? null : undefined;
  return value;
}
