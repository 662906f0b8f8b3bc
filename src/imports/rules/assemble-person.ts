import type { PersonPropertyInput } from "../../api/index.ts";
import type { RowProblem } from "../row-problem.ts";
import { splitFullName } from "./full-name.ts";
import { mayHoldSeveral, saysNoValue } from "./multi-value.ts";
import { cellFailed, readCell } from "./read-cell.ts";
import {
  type ColumnStep,
  KIND_FULL_NAME,
  KIND_LIST,
  KIND_OPTED_OUT,
  KIND_SCALAR,
  MULTI_NONE,
  type RowPlan,
} from "./row-plan.ts";
import { noteColumnProblem, noteColumnWarning, type PersonDraft } from "./settle-problems.ts";
import { addValues, putShared } from "./several-values.ts";
import {
  type CellValue,
  CONSENT_UNSTATED,
  isFailure,
  type TransformResult,
  toOptedOut,
} from "./transforms/index.ts";

const implicitOptedOut = toOptedOut("opt-out");

/** A person being assembled from a row: the draft, and a full name waiting for the fields it may fill. */
interface Assembly extends PersonDraft {
  fullName: { first: string; last: string } | undefined;
}

/**
 * Step 3, assemble a person: each column's cell read (readCell) and put in
 * its field, list or property; a cell that fails, or does not fit its field,
 * becomes the row's problem and the rest of the row goes on. A "not opted
 * out" is held back unless the job allows opting in. The row's width is
 * checked before (mapRow).
 */
export function assemblePerson(plan: RowPlan, cells: readonly string[], row: number): PersonDraft {
  const a: Assembly = {
    person: {},
    properties: undefined,
    propHeaders: undefined,
    problems: undefined,
    heldBack: false,
    fullName: undefined,
  };
  // The row's own phone country (phoneCountryColumn), read once for all its phone columns.
  const country =
    plan.phoneCountryIndex < 0 ? undefined : plan.phoneCountryOf(cells[plan.phoneCountryIndex] as string);
  const steps = plan.steps;
  for (let c = 0; c < steps.length; c++) {
    const p = steps[c] as ColumnStep;
    takeCell(plan, a, p, cells[p.index] as string, country, row);
  }
  // A column mapped to firstName or lastName wins over the full name for its field.
  const person = a.person;
  if (a.fullName !== undefined) {
    if (person.firstName === undefined && a.fullName.first !== "") person.firstName = a.fullName.first;
    if (person.lastName === undefined && a.fullName.last !== "") person.lastName = a.fullName.last;
  }
  return {
    person,
    properties: a.properties,
    propHeaders: a.propHeaders,
    problems: a.problems,
    heldBack: a.heldBack,
  };
}

/** One column's cell read and put: split when it holds several values, else read whole. */
function takeCell(
  plan: RowPlan,
  a: Assembly,
  p: ColumnStep,
  cell: string,
  country: string | undefined,
  row: number,
): void {
  let raw = cell;
  if (p.multi !== MULTI_NONE && saysNoValue(raw)) raw = "";
  const transform = country !== undefined && p.transformFor ? p.transformFor(country) : p.transform;
  if (p.multi !== MULTI_NONE && mayHoldSeveral(raw) && raw.length <= plan.maxFieldLength) {
    a.problems = addValues(plan, a.person, p, raw, transform, a.problems, row);
    return;
  }
  const value = readCell(p, raw, plan.maxFieldLength, transform);
  if (value === undefined) return;
  // Most cells are text: only another kind of value can be a failure.
  if (typeof value !== "string" && cellFailed(value)) noteFailure(plan, a, p, value, row);
  else if (p.shared) {
    if (typeof value === "string") a.problems = putShared(plan, a.person, p, [value], a.problems, row);
    else expectsOneValue(plan, a, p, row);
  } else putValue(plan, a, p, value, row);
}

/** A value put where its column's kind says: a field, a list, isOptedOut, the full name or a property. */
function putValue(plan: RowPlan, a: Assembly, p: ColumnStep, value: CellValue | null, row: number): void {
  const person = a.person;
  switch (p.kind) {
    case KIND_SCALAR:
      if (Array.isArray(value)) expectsOneValue(plan, a, p, row);
      else person[p.field] = value;
      return;
    case KIND_LIST: {
      if (typeof value !== "string" && !Array.isArray(value)) {
        a.problems = noteColumnProblem(plan, a.problems, p.col, "invalid_type", "expects text", row);
        return;
      }
      const list = person[p.field] as string[] | undefined;
      // The transforms make a new array a cell: the first column's becomes the list, never changed after.
      if (list === undefined) person[p.field] = typeof value === "string" ? [value] : value;
      else person[p.field] = list.concat(value);
      return;
    }
    case KIND_OPTED_OUT: {
      const b = typeof value === "string" ? implicitOptedOut(value) : value;
      if (typeof b === "object" && b !== null && isFailure(b as TransformResult)) {
        noteFailure(plan, a, p, b as RowProblem, row);
      } else if (b === false && !plan.allowOptIn) a.heldBack = true;
      else person.isOptedOut = b;
      return;
    }
    case KIND_FULL_NAME:
      if (typeof value === "string") a.fullName = splitFullName(value);
      else a.problems = noteColumnProblem(plan, a.problems, p.col, "invalid_type", "expects one name", row);
      return;
    default:
      putProperty(a, p, value as PersonPropertyInput["value"]);
  }
}

function putProperty(a: Assembly, p: ColumnStep, value: PersonPropertyInput["value"]): void {
  a.properties ??= [];
  a.propHeaders ??= [];
  // Object literals of two fixed shapes: spreading the target cost more than the rest of the row.
  a.properties.push(
    p.propertyId !== undefined
      ? { propertyId: p.propertyId, value }
      : { name: p.propertyName, propertyType: p.propertyType, value },
  );
  a.propHeaders.push(p.col.header);
}

/** A value the transforms refused: the row's problem, or only a warning when it says nothing about consent. */
function noteFailure(plan: RowPlan, a: Assembly, p: ColumnStep, f: RowProblem, row: number): void {
  a.problems =
    f.code === CONSENT_UNSTATED
      ? noteColumnWarning(a.problems, p.col, f.code, f.message)
      : noteColumnProblem(plan, a.problems, p.col, f.code, f.message, row, p.shared);
}

/** A list where one value goes; in one of several columns of a field it is an optional problem. */
function expectsOneValue(plan: RowPlan, a: Assembly, p: ColumnStep, row: number): void {
  a.problems = noteColumnProblem(
    plan,
    a.problems,
    p.col,
    "invalid_type",
    "expects one value, got a list",
    row,
    p.shared,
  );
}
