import type { ImportPerson, PersonPropertyInput } from "../../api/index.ts";
import type { DroppedValue, RowProblem, RowProblemCode } from "../row-problem.ts";
import { checkPerson } from "./check-person.ts";
import { describeTarget, type PlannedColumn } from "./column-plan.ts";
import { identifierKey, identifierSelector } from "./identifier.ts";
import type { MappedRow } from "./mapped-row.ts";
import type { RowPlan } from "./row-plan.ts";

/**
 * A row's problems so far, made on its first one (most rows have none).
 * `dropped` mirrors the issues that `drop` may leave out; `blocking` counts
 * the others, any of which rejects the row with every issue it has.
 */
export interface RowProblems {
  issues: RowProblem[];
  dropped: DroppedValue[];
  blocking: number;
}

/** A person as the row's cells made it, before the contract's verdict. */
export interface PersonDraft {
  person: Record<string, unknown>;
  /** The row's properties, in column order; attached to the person once it is settled. */
  properties: PersonPropertyInput[] | undefined;
  /** The header of each property, by its place in `properties`, to name it in problems. */
  propHeaders: string[] | undefined;
  problems: RowProblems | undefined;
  /** The row said "not opted out" and the job holds such rows back. */
  heldBack: boolean;
}

/** Where in the person a column's value goes: its field, or `properties`. */
function pathOf(col: PlannedColumn): string[] {
  return typeof col.to === "string" ? [col.to] : ["properties"];
}

/**
 * Notes a column's problem: under `drop`, a value outside the identifier is
 * left out of the person; anything else blocks the row.
 */
export function noteColumnProblem(
  plan: RowPlan,
  problems: RowProblems | undefined,
  col: PlannedColumn,
  code: RowProblemCode,
  message: string,
  row: number,
  /** An extra value of a multi-value cell: optional even in the identifier's column. */
  extraValue = false,
): RowProblems {
  const p = problems ?? { issues: [], dropped: [], blocking: 0 };
  const path = pathOf(col);
  p.issues.push({ code, path, message: `${col.header}: ${message}`, row });
  if (plan.dropInvalid && (extraValue || !col.identifier)) {
    p.dropped.push({ code, path, message, field: describeTarget(col.to), column: col.header });
  } else p.blocking++;
  return p;
}

/**
 * Notes a value that is no error but is not used either (a consent column's
 * "cleaned"): listed in the warnings file whatever `invalidOptionalValues`
 * says, never a reason to reject the row.
 */
export function noteColumnWarning(
  problems: RowProblems | undefined,
  col: PlannedColumn,
  code: RowProblemCode,
  message: string,
): RowProblems {
  const p = problems ?? { issues: [], dropped: [], blocking: 0 };
  p.dropped.push({ code, path: pathOf(col), message, field: describeTarget(col.to), column: col.header });
  return p;
}

/** Notes a problem that rejects the row whatever `invalidOptionalValues` says. */
export function noteBlockingProblem(problems: RowProblems | undefined, issue: RowProblem): RowProblems {
  const p = problems ?? { issues: [], dropped: [], blocking: 0 };
  p.issues.push(issue);
  p.blocking++;
  return p;
}

/** The file's header a schema issue's path points at. */
function headerAt(plan: RowPlan, path: readonly PropertyKey[], propHeaders: readonly string[]): string {
  const [head, index] = path;
  if (head === "properties" && typeof index === "number") return propHeaders[index] ?? "properties";
  if (typeof head === "string") return plan.fieldHeader.get(head) ?? head;
  return "row";
}

/**
 * Takes the schema's verdict on a person: under `drop`, a failing field
 * other than the identifier leaves the person (a failing list item leaves
 * its list); anything else is blocking. Changes `person` only when nothing blocks.
 */
export function settleSchemaProblems(
  plan: RowPlan,
  person: Record<string, unknown>,
  found: readonly RowProblem[],
  problems: RowProblems | undefined,
  propHeaders: readonly string[],
  row: number,
): RowProblems {
  const p = problems ?? { issues: [], dropped: [], blocking: 0 };
  const badItems = new Map<string, Set<number>>();
  for (const i of found) {
    const at = headerAt(plan, i.path, propHeaders);
    p.issues.push({ ...i, message: `${at}: ${i.message}`, row });
    const [field, item] = i.path;
    if (!plan.dropInvalid || typeof field !== "string" || field === plan.identifier) {
      p.blocking++;
      continue;
    }
    p.dropped.push({ ...i, field, column: at });
    if (typeof item === "number" && Array.isArray(person[field])) {
      const set = badItems.get(field) ?? new Set<number>();
      set.add(item);
      badItems.set(field, set);
    } else badItems.set(field, new Set());
  }
  if (p.blocking > 0) return p;
  for (const [field, items] of badItems) {
    const list = person[field];
    const kept = Array.isArray(list) && items.size > 0 ? list.filter((_v, k) => !items.has(k)) : [];
    if (kept.length > 0) person[field] = kept;
    else delete person[field];
  }
  return p;
}

/**
 * Step 5, settle problems: the row's own problems, then the contract's
 * verdict on the person, then its identifier decide whether the row is a
 * person to send (with the values `drop` left out) or rejected with every
 * issue it has.
 */
export function settleRow(
  plan: RowPlan,
  draft: PersonDraft,
  population: string | null,
  row: number,
  /** The row's own cells, when it had fewer than the header (read as if the rest were empty). */
  cellCount = plan.width,
): MappedRow {
  let problems = draft.problems;
  // Without `drop` every problem blocks: what is left unblocked are warnings (noteColumnWarning).
  if (problems && problems.blocking > 0) return { ok: false, issues: problems.issues };
  const person = draft.person;
  const found = checkPerson(person);
  if (found) {
    problems = settleSchemaProblems(plan, person, found, problems, draft.propHeaders ?? [], row);
    if (problems.blocking > 0) return { ok: false, issues: problems.issues };
  }
  if (draft.properties) person.properties = draft.properties;
  const valid = person as ImportPerson;
  const identifier = plan.identifier;
  const key = identifierKey(valid, identifier);
  if (key === undefined) {
    return {
      ok: false,
      issues: [
        // Under `drop`, values it would have left out are reasons too: the row is not imported.
        ...(problems?.issues ?? []),
        missingIdentifier(plan, problems, cellCount, row),
      ],
    };
  }
  // One literal for each case: spreading an object of the optional key made two objects a row.
  if (problems) {
    const dropped = problems.dropped;
    return draft.heldBack
      ? { ok: true, person: valid, key, population, dropped, optInHeldBack: true }
      : { ok: true, person: valid, key, population, dropped };
  }
  return draft.heldBack
    ? { ok: true, person: valid, key, population, optInHeldBack: true }
    : { ok: true, person: valid, key, population };
}

/**
 * Why a row has no identifier: its column is empty; its values (several
 * columns `to: phone`, a cell of several numbers) are all invalid, each
 * one's reason listed before; or a short row ends before its column.
 */
function missingIdentifier(
  plan: RowPlan,
  problems: RowProblems | undefined,
  cellCount: number,
  row: number,
): RowProblem {
  const identifier = plan.identifier;
  const what = identifier.startsWith("property:") ? `property ${identifierSelector(identifier)}` : identifier;
  const where = plan.identifierHeaders || what;
  const indexes = plan.identifierIndexes;
  let message: string;
  if (indexes.length > 0 && indexes.every((i) => i >= cellCount)) {
    message = `${where}: not in the row (it has ${cellCount} cells, the header has ${plan.width}), and it is the identifier (${what})`;
  } else if (problems?.issues.some((i) => i.path[0] === identifier)) {
    message = `${where}: no valid value, and it is the identifier (${what})`;
  } else message = `${where}: empty, and it is the identifier (${what})`;
  return {
    code: "missing_identifier",
    path: identifier.startsWith("property:") ? ["properties"] : [identifier],
    message,
    row,
  };
}
