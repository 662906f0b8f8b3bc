import { eachString, type TransformFn } from "./cell-value.ts";

export const trim: TransformFn = eachString((s) => s.trim());

export function changeCase(mode: "lower" | "upper" | "title"): TransformFn {
  if (mode === "lower") return eachString((s) => s.toLowerCase());
  if (mode === "upper") return eachString((s) => s.toUpperCase());
  // Title case keeps the letters after an apostrophe or hyphen capitalised: O'Brien, Smith-Jones.
  return eachString((s) =>
    s.toLowerCase().replace(/(^|[\s'’-])(\p{L})/gu, (_m, sep: string, ch: string) => sep + ch.toUpperCase()),
  );
}
