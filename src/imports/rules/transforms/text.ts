import { eachString, type TransformFn } from "./cell-value.ts";

export const trim: TransformFn = eachString((s) => s.trim());

/**
 * Whether lower-casing leaves `s` as it is: ASCII without capitals. V8's
 * toLowerCase copies any string of 8 characters or more before it finds
 * nothing to change, and most emails are lower case already.
 */
function isLowerAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch > 127 || (ch >= 65 && ch <= 90)) return false;
  }
  return true;
}

export function changeCase(mode: "lower" | "upper" | "title"): TransformFn {
  if (mode === "lower") return eachString((s) => (isLowerAscii(s) ? s : s.toLowerCase()));
  if (mode === "upper") return eachString((s) => s.toUpperCase());
  // Title case keeps the letters after an apostrophe or hyphen capitalised: O'Brien, Smith-Jones.
  return eachString((s) =>
    s.toLowerCase().replace(/(^|[\s'’-])(\p{L})/gu, (_m, sep: string, ch: string) => sep + ch.toUpperCase()),
  );
}
