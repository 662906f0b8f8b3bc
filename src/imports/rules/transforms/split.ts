import type { TransformFn } from "./cell-value.ts";
import { fail } from "./cell-value.ts";

/** Splits on a separator, trimming items and dropping empty ones ("a; ;b;" → ["a","b"]). */
export function split(separator: string): TransformFn {
  return (value) => {
    if (typeof value === "boolean") return fail("not_text", "expects text, got a yes/no value");
    if (typeof value === "string" && !value.includes(separator)) {
      // Most cells hold one item: one small array for it, where the way below makes three (one grown by push).
      const t = value.trim();
      return t === "" ? [] : [t];
    }
    const items = typeof value === "string" ? [value] : value;
    const out: string[] = [];
    for (const item of items) {
      for (const part of item.split(separator)) {
        const t = part.trim();
        if (t !== "") out.push(t);
      }
    }
    return out;
  };
}
