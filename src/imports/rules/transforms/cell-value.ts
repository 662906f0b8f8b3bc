import type { RowProblem, RowProblemCode } from "../../row-problem.ts";

/** A cell on its way through a column's transforms. */
export type CellValue = string | string[] | boolean;

/** A value, or the problem of a transform that cannot make sense of it (the row is rejected with it). */
export type TransformResult = CellValue | RowProblem;
export type TransformFn = (value: CellValue) => TransformResult;

/** A cell's problem: the column it came from gives its path, and its row. */
export function fail(code: RowProblemCode, message: string): RowProblem {
  return { code, path: [], message };
}

export function isFailure(v: TransformResult): v is RowProblem {
  return typeof v === "object" && !Array.isArray(v);
}

/** String transforms apply to each item once a value has been split into a list. */
export function eachString(fn: (s: string) => string | RowProblem): TransformFn {
  return (value) => {
    if (typeof value === "string") return fn(value);
    if (typeof value === "boolean") return fail("not_text", "expects text, got a yes/no value");
    // Sized up front: an array grown by push from empty takes room for seventeen items.
    const out = new Array<string>(value.length);
    for (let i = 0; i < value.length; i++) {
      const r = fn(value[i] as string);
      if (typeof r !== "string") return r;
      out[i] = r;
    }
    return out;
  };
}
