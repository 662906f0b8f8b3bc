/** A cell on its way through a column's transforms. */
export type CellValue = string | string[] | boolean;

/** A transform that cannot make sense of a value; the row is rejected with it. */
export interface TransformFailure {
  failed: true;
  code: string;
  message: string;
}

export type TransformResult = CellValue | TransformFailure;
export type TransformFn = (value: CellValue) => TransformResult;

export function fail(code: string, message: string): TransformFailure {
  return { failed: true, code, message };
}

export function isFailure(v: TransformResult): v is TransformFailure {
  return typeof v === "object" && !Array.isArray(v);
}

/** String transforms apply to each item once a value has been split into a list. */
export function eachString(fn: (s: string) => string | TransformFailure): TransformFn {
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
