import { CONSENTED_WORDS, type Transform } from "../../../config/import-job.ts";
import { toBoolean } from "./boolean.ts";
import { type CellValue, isFailure, type TransformFn, type TransformResult } from "./cell-value.ts";
import { type ConsentPolarity, toOptedOut } from "./consent.ts";
import { toIsoDate } from "./date.ts";
import { toE164 } from "./phone.ts";
import { split } from "./split.ts";
import { changeCase, trim } from "./text.ts";

export { DEFAULT_FALSE_WORDS, DEFAULT_TRUE_WORDS, toBoolean } from "./boolean.ts";
export {
  type CellValue,
  isFailure,
  type TransformFn,
  type TransformResult,
} from "./cell-value.ts";
export { CONSENT_UNSTATED, type ConsentPolarity, consentPolarity, toOptedOut } from "./consent.ts";
export { countryOf, countryReader } from "./country.ts";
export { compileDateFormat, parseDate, toIsoDate } from "./date.ts";
export { PHONE_NEEDS_COUNTRY, toE164 } from "./phone.ts";
export { split } from "./split.ts";
export { changeCase, trim } from "./text.ts";

/** Formats the one-word `date` transform accepts. */
export const DEFAULT_DATE_FORMATS = ["iso", "YYYY/MM/DD", "MM/DD/YYYY"] as const;
/** Separator of the one-word `split` transform. */
export const DEFAULT_SPLIT_SEPARATOR = ";";

export interface TransformContext {
  /** Default country of `phone` transforms that name none. */
  phoneCountry?: string | undefined;
  /**
   * Set for a column mapped to isOptedOut: a plain `boolean` (or none) reads
   * consent words by their meaning and yes/no by the column's polarity
   * (consent.ts); a boolean with word lists never reads "subscribed" as true.
   */
  optedOut?: ConsentPolarity | undefined;
}

const NEVER_OPTED_OUT = CONSENTED_WORDS.map((w) => w.toLowerCase());

/** A boolean transform that says nothing but "boolean": its words are the defaults. */
function plainBoolean(t: Transform): boolean {
  if (t === "boolean") return true;
  if (typeof t !== "object" || !("boolean" in t)) return false;
  const b = t.boolean;
  return b.true === undefined && b.false === undefined && b.negate !== true;
}

/** One transform of a job definition as a function. */
export function compileTransform(t: Transform, ctx: TransformContext = {}): TransformFn {
  if (ctx.optedOut !== undefined && plainBoolean(t)) return toOptedOut(ctx.optedOut);
  if (typeof t === "string") {
    switch (t) {
      case "trim":
        return trim;
      case "lowercase":
        return changeCase("lower");
      case "uppercase":
        return changeCase("upper");
      case "titlecase":
        return changeCase("title");
      case "date":
        return toIsoDate(DEFAULT_DATE_FORMATS);
      case "boolean":
        return toBoolean();
      case "phone":
        return toE164(ctx.phoneCountry);
      case "split":
        return split(DEFAULT_SPLIT_SEPARATOR);
    }
  }
  if ("case" in t) return changeCase(t.case);
  if ("date" in t) return toIsoDate(typeof t.date === "string" ? [t.date] : t.date);
  if ("boolean" in t) {
    return toBoolean(ctx.optedOut === undefined ? t.boolean : { ...t.boolean, neverTrue: NEVER_OPTED_OUT });
  }
  if ("phone" in t) return toE164(t.phone);
  return split(t.split);
}

/** A column's transforms chained; the first failure stops the chain. */
export function compileTransforms(list: readonly Transform[], ctx: TransformContext = {}): TransformFn {
  const fns = list.map((t) => compileTransform(t, ctx));
  // An isOptedOut column without a boolean transform reads its words as a plain `boolean` would there.
  const reads = (t: Transform) => t === "boolean" || (typeof t === "object" && "boolean" in t);
  if (ctx.optedOut !== undefined && !list.some(reads)) fns.push(toOptedOut(ctx.optedOut));
  if (fns.length === 0) return (v) => v;
  if (fns.length === 1) return fns[0] as TransformFn;
  return (value: CellValue): TransformResult => {
    let v: TransformResult = value;
    for (const fn of fns) {
      v = fn(v as CellValue);
      if (isFailure(v)) return v;
    }
    return v;
  };
}
