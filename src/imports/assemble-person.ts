import type { PersonPropertyInput } from "../api/index.ts";
import { cellFailed, readCell } from "./read-cell.ts";
import { KIND_LIST, KIND_OPTED_OUT, KIND_SCALAR, type RowPlan } from "./row-plan.ts";
import { noteColumnProblem, type PersonDraft, type RowProblems } from "./settle-problems.ts";
import { isFailure, type TransformFailure, type TransformResult, toBoolean } from "./transforms/index.ts";

const implicitBoolean = toBoolean();

/**
 * Step 3, assemble a person: each column's cell read (readCell) and put in
 * its field, list or property; a cell that fails, or does not fit its field,
 * becomes the row's problem and the rest of the row goes on. A "not opted
 * out" is held back unless the job allows opting in. The row's width is
 * checked before (mapRow).
 */
export function assemblePerson(plan: RowPlan, cells: readonly string[], row: number): PersonDraft {
  const person: Record<string, unknown> = {};
  let properties: PersonPropertyInput[] | undefined;
  let propHeaders: string[] | undefined;
  let problems: RowProblems | undefined;
  let heldBack = false;
  const steps = plan.steps;
  const maxFieldLength = plan.maxFieldLength;

  for (let c = 0; c < steps.length; c++) {
    const p = steps[c] as (typeof steps)[number];
    const value = readCell(p, cells[p.index] as string, maxFieldLength);
    if (value === undefined) continue;
    // Most cells are text: only another kind of value can be a failure.
    if (typeof value !== "string" && cellFailed(value)) {
      problems = noteColumnProblem(plan, problems, p.col, value.code, value.message, row);
      continue;
    }
    switch (p.kind) {
      case KIND_SCALAR:
        if (Array.isArray(value))
          problems = noteColumnProblem(
            plan,
            problems,
            p.col,
            "invalid_type",
            "expects one value, got a list",
            row,
          );
        else person[p.field] = value;
        break;
      case KIND_LIST: {
        if (typeof value !== "string" && !Array.isArray(value)) {
          problems = noteColumnProblem(plan, problems, p.col, "invalid_type", "expects text", row);
          break;
        }
        const list = person[p.field] as string[] | undefined;
        // The transforms make a new array a cell: the first column's becomes the list, never changed after.
        if (list === undefined) person[p.field] = typeof value === "string" ? [value] : value;
        else person[p.field] = list.concat(value);
        break;
      }
      case KIND_OPTED_OUT: {
        const b = typeof value === "string" ? implicitBoolean(value) : value;
        if (typeof b === "object" && b !== null && isFailure(b as TransformResult)) {
          const f = b as TransformFailure;
          problems = noteColumnProblem(plan, problems, p.col, f.code, f.message, row);
        } else if (b === false && !plan.allowOptIn) heldBack = true;
        else person.isOptedOut = b;
        break;
      }
      default:
        properties ??= [];
        propHeaders ??= [];
        // Object literals of two fixed shapes: spreading the target cost more than the rest of the row.
        properties.push(
          p.propertyId !== undefined
            ? { propertyId: p.propertyId, value: value as PersonPropertyInput["value"] }
            : {
                name: p.propertyName,
                propertyType: p.propertyType,
                value: value as PersonPropertyInput["value"],
              },
        );
        propHeaders.push(p.col.header);
    }
  }
  return { person, properties, propHeaders, problems, heldBack };
}
