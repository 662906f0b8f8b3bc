import { parseFullName } from "parse-full-name";
import type { PersonPropertyInput } from "../api/index.ts";
import { checkPerson } from "./check-person.ts";
import { mayHoldSeveral, saysNoValue, splitValues } from "./multi-value.ts";
import { cellFailed, readCell } from "./read-cell.ts";
import {
  type ColumnStep,
  KIND_FULL_NAME,
  KIND_LIST,
  KIND_OPTED_OUT,
  KIND_SCALAR,
  MULTI_EMAILS,
  MULTI_NONE,
  type RowPlan,
} from "./row-plan.ts";
import type { RowProblem } from "./row-problem.ts";
import {
  noteColumnProblem,
  noteColumnWarning,
  type PersonDraft,
  type RowProblems,
} from "./settle-problems.ts";
import {
  CONSENT_UNSTATED,
  isFailure,
  type TransformFn,
  type TransformResult,
  toOptedOut,
} from "./transforms/index.ts";

const implicitOptedOut = toOptedOut("opt-out");

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
  let fullName: { first: string; last: string } | undefined;
  const steps = plan.steps;
  const maxFieldLength = plan.maxFieldLength;
  // The row's own phone country (phoneCountryColumn), read once for all its phone columns.
  const country =
    plan.phoneCountryIndex < 0 ? undefined : plan.phoneCountryOf(cells[plan.phoneCountryIndex] as string);

  for (let c = 0; c < steps.length; c++) {
    const p = steps[c] as (typeof steps)[number];
    let raw = cells[p.index] as string;
    if (p.multi !== MULTI_NONE && saysNoValue(raw)) raw = "";
    const transform = country !== undefined && p.transformFor ? p.transformFor(country) : p.transform;
    if (p.multi !== MULTI_NONE && mayHoldSeveral(raw) && raw.length <= maxFieldLength) {
      problems = addValues(plan, person, p, raw, transform, problems, row);
      continue;
    }
    const value = readCell(p, raw, maxFieldLength, transform);
    if (value === undefined) continue;
    // Most cells are text: only another kind of value can be a failure.
    if (typeof value !== "string" && cellFailed(value)) {
      problems =
        value.code === CONSENT_UNSTATED
          ? noteColumnWarning(problems, p.col, value.code, value.message)
          : noteColumnProblem(plan, problems, p.col, value.code, value.message, row, p.shared);
      continue;
    }
    if (p.shared) {
      problems =
        typeof value === "string"
          ? putShared(plan, person, p, [value], problems, row)
          : noteColumnProblem(
              plan,
              problems,
              p.col,
              "invalid_type",
              "expects one value, got a list",
              row,
              true,
            );
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
        const b = typeof value === "string" ? implicitOptedOut(value) : value;
        if (typeof b === "object" && b !== null && isFailure(b as TransformResult)) {
          const f = b as RowProblem;
          problems =
            f.code === CONSENT_UNSTATED
              ? noteColumnWarning(problems, p.col, f.code, f.message)
              : noteColumnProblem(plan, problems, p.col, f.code, f.message, row);
        } else if (b === false && !plan.allowOptIn) heldBack = true;
        else person.isOptedOut = b;
        break;
      }
      case KIND_FULL_NAME:
        if (typeof value === "string") fullName = splitFullName(value);
        else problems = noteColumnProblem(plan, problems, p.col, "invalid_type", "expects one name", row);
        break;
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
  // A column mapped to firstName or lastName wins over the full name for its field.
  if (fullName !== undefined) {
    if (person.firstName === undefined && fullName.first !== "") person.firstName = fullName.first;
    if (person.lastName === undefined && fullName.last !== "") person.lastName = fullName.last;
  }
  return { person, properties, propHeaders, problems, heldBack };
}

/**
 * A full name split (parse-full-name): "Dr. Jane Q. Smith Jr." → Jane Q. /
 * Smith Jr., "Smith, Jane" → Jane / Smith. Titles and nicknames are left out;
 * a middle name goes with the first; a single word is a first name.
 */
export function splitFullName(name: string): { first: string; last: string } {
  const parsed = parseFullName(name, "all", false, false, true);
  const first = [parsed.first, parsed.middle].filter((s) => s).join(" ");
  const last = [parsed.last, parsed.suffix].filter((s) => s).join(" ");
  return first === "" && !last.includes(" ") ? { first: last, last: "" } : { first, last };
}

/**
 * A cell of several emails or phones (multi-value.ts): each value read on
 * its own, the first valid one to the column's field and the rest to its
 * list (or all to the list for a list column), without repeats. A failing
 * value is the column's optional problem (`drop` leaves it out), even in the
 * identifier's column: "+91 9143 ::: +91 98765 43210" is imported by the
 * second number.
 */
function addValues(
  plan: RowPlan,
  person: Record<string, unknown>,
  p: ColumnStep,
  raw: string,
  transform: TransformFn,
  problems: RowProblems | undefined,
  row: number,
): RowProblems | undefined {
  const listField = p.multi === MULTI_EMAILS ? "additionalEmails" : "additionalPhones";
  const values: string[] = [];
  const items = splitValues(raw, p.multi !== MULTI_EMAILS);
  for (let k = 0; k < items.length; k++) {
    const read = readCell(p, items[k] as string, plan.maxFieldLength, transform);
    if (read === undefined || read === null) continue;
    if (typeof read !== "string" && cellFailed(read)) {
      // Any value of the cell may be the one the row is imported by: a failing one is optional, and
      // the row is rejected only when none is valid (settle-problems.ts).
      problems = noteColumnProblem(plan, problems, p.col, read.code, read.message, row, true);
      continue;
    }
    if (typeof read === "string") values.push(read);
    else if (Array.isArray(read)) values.push(...read);
  }
  if (values.length === 0) {
    if (p.nullOnEmpty) person[p.field] = null;
    return problems;
  }
  if (p.shared) return putShared(plan, person, p, values, problems, row);
  let rest = values;
  if (p.kind === KIND_SCALAR) {
    person[p.field] = values[0];
    rest = values.slice(1);
  }
  const list = (person[listField] as string[] | undefined) ?? [];
  const seen = new Set<string>(list);
  if (typeof person[p.field] === "string") seen.add(person[p.field] as string);
  const added = rest.filter((v) => {
    if (seen.has(v)) return false;
    seen.add(v);
    return true;
  });
  if (added.length > 0) person[listField] = list.concat(added);
  return problems;
}

/**
 * Values of one of several columns `to: email` or `to: phone`, in the order
 * the columns are listed: each checked against the contract on its own, the
 * first valid one of the row becomes the field (and so the identifier when
 * it is the job's), the others go to the additional list without repeats. An
 * invalid value is an optional one (`drop` leaves it out): the row needs
 * only one valid value among the columns (settle-problems.ts says when none).
 */
function putShared(
  plan: RowPlan,
  person: Record<string, unknown>,
  p: ColumnStep,
  values: readonly string[],
  problems: RowProblems | undefined,
  row: number,
): RowProblems | undefined {
  const field = p.field;
  const listField = field === "email" ? "additionalEmails" : "additionalPhones";
  // The service matches emails ignoring case: the same address twice is one.
  const same = field === "email" ? sameEmail : (a: string, b: string) => a === b;
  for (const v of values) {
    const found = checkPerson({ [field]: v });
    if (found !== undefined) {
      for (const f of found)
        problems = noteColumnProblem(plan, problems, p.col, f.code, f.message, row, true);
      continue;
    }
    const first = person[field];
    if (first === undefined || first === null) {
      person[field] = v;
      continue;
    }
    if (same(first as string, v)) continue;
    const list = person[listField] as string[] | undefined;
    if (list === undefined) person[listField] = [v];
    else if (!list.some((x) => same(x, v))) person[listField] = list.concat(v);
  }
  return problems;
}

function sameEmail(a: string, b: string): boolean {
  return a === b || a.toLowerCase() === b.toLowerCase();
}
