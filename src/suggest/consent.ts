import type { Transform } from "../config/import-job.ts";
import {
  FALSE_WORDS,
  NEUTRAL_STATUS_WORDS,
  OPT_OUT_WORDS,
  SUBSCRIBED_WORDS,
  TRUE_WORDS,
} from "./header-words.ts";

/**
 * How a column says whether a person is opted out:
 * - `opt-out`: its yes is an opt-out (Salesforce's Email Opt Out, Abmeldung, Baja);
 * - `consent`: its yes is a consent, so its no is the opt-out (Shopify's
 *   Accepts Email Marketing, Newsletter, Einwilligung, consentimiento);
 * - `subscription`: a status word (Mailchimp's and Wix's subscribed /
 *   unsubscribed / cleaned / pending); a yes or no there says nothing.
 */
export type ConsentPolarity = "opt-out" | "consent" | "subscription";

const unique = (words: readonly string[]) => [...new Set(words)];

/**
 * The words read as opted out (true) and as not opted out (false). An
 * unsubscribed is always true and a subscribed always false, whatever the
 * header; a value in neither list is reported by the import and never guessed.
 */
export function consentWords(polarity: ConsentPolarity): { true: string[]; false: string[] } {
  if (polarity === "subscription") return { true: [...OPT_OUT_WORDS], false: [...SUBSCRIBED_WORDS] };
  const yes = polarity === "opt-out" ? TRUE_WORDS : FALSE_WORDS;
  const no = polarity === "opt-out" ? FALSE_WORDS : TRUE_WORDS;
  return { true: unique([...yes, ...OPT_OUT_WORDS]), false: unique([...no, ...SUBSCRIBED_WORDS]) };
}

/** The isOptedOut transform of a column of this polarity: explicit word lists, no defaults, no negate. */
export function consentTransform(polarity: ConsentPolarity): Transform {
  return { boolean: consentWords(polarity) };
}

export interface ConsentValues {
  /** Sampled non-empty values. */
  filled: number;
  optedOut: number;
  notOptedOut: number;
  /** Values in neither list: reported by the import, the value left unset. */
  neither: number;
  /** Of `neither`, the known words that say nothing about consent (cleaned, pending…): vocabulary, never a cell. */
  neutralWords: string[];
}

/** How a column's sampled values fall under a polarity's word lists. */
export function readConsentValues(values: readonly string[], polarity: ConsentPolarity): ConsentValues {
  const words = consentWords(polarity);
  const yes = new Set(words.true.map((w) => w.toLowerCase()));
  const no = new Set(words.false.map((w) => w.toLowerCase()));
  const neutral = new Set<string>();
  const out: ConsentValues = { filled: 0, optedOut: 0, notOptedOut: 0, neither: 0, neutralWords: [] };
  for (const raw of values) {
    const v = raw.trim().toLowerCase();
    if (v === "") continue;
    out.filled++;
    if (yes.has(v)) out.optedOut++;
    else if (no.has(v)) out.notOptedOut++;
    else {
      out.neither++;
      if (NEUTRAL_STATUS_WORDS.includes(v)) neutral.add(v);
    }
  }
  out.neutralWords = [...neutral].sort();
  return out;
}

const STATUS_WORDS = new Set([...OPT_OUT_WORDS, ...SUBSCRIBED_WORDS, ...NEUTRAL_STATUS_WORDS]);

/**
 * Whether a column whose header says nothing of consent (Mailchimp's
 * `status`) holds subscription statuses: most of its sampled values are
 * status words, and some say subscribed or unsubscribed.
 */
export function holdsSubscriptionStatus(values: readonly string[]): boolean {
  const filled = values.map((v) => v.trim().toLowerCase()).filter(Boolean);
  if (filled.length === 0) return false;
  const status = filled.filter((v) => STATUS_WORDS.has(v)).length;
  const telling = filled.filter((v) => OPT_OUT_WORDS.includes(v) || SUBSCRIBED_WORDS.includes(v)).length;
  return status / filled.length >= 0.8 && telling > 0;
}

/** What a consent column's note adds: how the sampled values fall, and what happens to the rest. */
export function consentNote(polarity: ConsentPolarity, v: ConsentValues): string {
  const how =
    polarity === "opt-out"
      ? "yes (or unsubscribed) is opted out"
      : polarity === "consent"
        ? "yes (or subscribed) is consent, so no (or unsubscribed) is opted out"
        : "unsubscribed is opted out, subscribed is not";
  let note = `; ${how}: of ${v.filled} sampled values ${v.optedOut} opt out and ${v.notOptedOut} do not`;
  if (v.neither > 0) {
    const words =
      v.neutralWords.length > 0 ? ` (${v.neutralWords.join(", ")}: they say nothing about consent)` : "";
    note += `; ${v.neither} are in neither list${words}: such rows are reported and the value left unset, not guessed`;
  }
  return note;
}
