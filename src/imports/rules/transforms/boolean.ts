import { fail, type TransformFn } from "./cell-value.ts";

/**
 * Yes and no in the languages `jobs suggest` knows (en, de, es, fr), and the
 * subscription words. Matched trimmed, ignoring case; "sí" is matched with
 * and without its accent.
 */
export const DEFAULT_TRUE_WORDS = [
  "yes",
  "y",
  "true",
  "t",
  "1",
  "subscribed",
  "ja",
  "wahr",
  "sí",
  "si",
  "verdadero",
  "oui",
  "vrai",
] as const;
export const DEFAULT_FALSE_WORDS = [
  "no",
  "n",
  "false",
  "f",
  "0",
  "unsubscribed",
  "nein",
  "falsch",
  "falso",
  "non",
  "faux",
] as const;

export interface BooleanOptions {
  /** Replace the default words (matched trimmed, ignoring case). */
  true?: readonly string[] | undefined;
  false?: readonly string[] | undefined;
  /** Flip the result: "subscribed" → isOptedOut false. */
  negate?: boolean | undefined;
  /**
   * Words that must never give true (after `negate`): an isOptedOut column
   * never reads "subscribed" as opted out, whatever default list it uses.
   */
  neverTrue?: readonly string[] | undefined;
}

export function toBoolean(options: BooleanOptions = {}): TransformFn {
  const yes = new Set((options.true ?? DEFAULT_TRUE_WORDS).map((w) => w.trim().toLowerCase()));
  const no = new Set((options.false ?? DEFAULT_FALSE_WORDS).map((w) => w.trim().toLowerCase()));
  const negate = options.negate === true;
  for (const w of options.neverTrue ?? []) (negate ? no : yes).delete(w);
  const known = [...yes, ...no].join(", ");
  return (value) => {
    if (typeof value === "boolean") return negate ? !value : value;
    if (typeof value !== "string") return fail("not_boolean", "expects one yes/no value, got a list");
    const w = value.trim().toLowerCase();
    // The message names the accepted words, never the cell: it may hold personal data.
    if (yes.has(w)) return !negate;
    if (no.has(w)) return negate;
    return fail("not_boolean", `not a yes/no value (accepted: ${known})`);
  };
}
