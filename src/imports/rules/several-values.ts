import { checkPerson } from "./check-person.ts";
import { splitValues } from "./multi-value.ts";
import { cellFailed, readCell } from "./read-cell.ts";
import { type ColumnStep, KIND_SCALAR, MULTI_EMAILS, type RowPlan } from "./row-plan.ts";
import { noteColumnProblem, type RowProblems } from "./settle-problems.ts";
import type { TransformFn } from "./transforms/index.ts";

/**
 * A field fed by several values: a cell of several emails or phones, or
 * several columns `to: email` or `to: phone`. The first valid value is the
 * field's, the others go to its additional list, without repeats.
 */

/**
 * A cell of several emails or phones (multi-value.ts): each value read on
 * its own, the first valid one to the column's field and the rest to its
 * list (or all to the list for a list column), without repeats. A failing
 * value is the column's optional problem (`drop` leaves it out), even in the
 * identifier's column: "+91 9143 ::: +91 98765 43210" is imported by the
 * second number.
 */
export function addValues(
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
export function putShared(
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
