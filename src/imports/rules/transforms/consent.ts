import { CONSENTED_WORDS } from "../../../config/import-job.ts";
import type { RowProblem } from "../../row-problem.ts";
import { fail, type TransformFn } from "./cell-value.ts";

/**
 * The failure of a value that says nothing about consent ("cleaned",
 * "pending"): never an error of the row, never guessed. The isOptedOut field
 * is left unset and the value's kind is listed in the warnings file.
 */
export const CONSENT_UNSTATED = "consent_unstated";

/** What "yes" in a column means: `opt-out` (headed "Opted Out"), or `consent` (headed "Subscribed"). */
export type ConsentPolarity = "opt-out" | "consent";

/** Lower case, no accents, punctuation as spaces: "Opted-Out" → "opted out", "Sí" → "si". */
export function consentWord(s: string): string {
  return s
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Words that opt a person out whatever the column's header. */
const OPTED_OUT = [
  "unsubscribed",
  "unsubscribe",
  "opted out",
  "opt out",
  "optout",
  "optedout",
  "withdrawn",
  "consent withdrawn",
  "revoked",
  "declined",
  "do not contact",
  "do not email",
  "abgemeldet",
  "abbestellt",
  "widerrufen",
  "dado de baja",
  "de baja",
  "baja",
  "desuscrito",
  "desuscrita",
  "desinscrit",
  "desinscrite",
  "desabonne",
  "desabonnee",
];

/** Words that say nothing about research consent: reported, left unset. */
const UNSTATED = [
  "cleaned",
  "pending",
  "bounced",
  "transactional",
  "non subscribed",
  "nonsubscribed",
  "not subscribed",
  "never subscribed",
  "no suscrito",
  "nicht abonniert",
  "non abonne",
  "not set",
  "notset",
  "unknown",
  "unconfirmed",
  "archived",
  "n a",
];

const YES = ["yes", "y", "true", "t", "1", "ja", "j", "wahr", "si", "verdadero", "oui", "vrai"];
const NO = ["no", "n", "false", "f", "0", "nein", "falsch", "falso", "non", "faux"];

/** Header words of an opt-out column, checked first ("Unsubscribed" holds "subscri" too). */
const OPT_OUT_HEADER =
  /optout|optedout|unsubscri|donotcontact|donotemail|abgemeldet|abmeld|abbestell|widerspruch|keinkontakt|nichtkontakt|baja|nocontactar|desinscri|desabonn|opposition|nepascontacter/;
/** Header words of a subscription or consent column: there "yes" means consent, so not opted out. */
const CONSENT_HEADER =
  /subscri|consent|optin|optedin|newsletter|marketing|permission|einwillig|einverst|zustimm|abonn|suscri|consentimiento|acepta|accepte|inscri/;

/**
 * What yes/no mean in a column mapped to isOptedOut, by its header (letters
 * and digits only, lower case, as normalizeHeader makes it). A header that
 * says neither is read as the field it is mapped to: "yes" is opted out.
 */
export function consentPolarity(normalizedHeader: string): ConsentPolarity {
  if (OPT_OUT_HEADER.test(normalizedHeader)) return "opt-out";
  return CONSENT_HEADER.test(normalizedHeader) ? "consent" : "opt-out";
}

/**
 * The isOptedOut reader of a column (what a plain `boolean` transform, or
 * none, means there): words that carry their own meaning (unsubscribed,
 * subscribed, opted in) are read by it; yes/no words by the column's
 * polarity; words that say nothing about consent fail as CONSENT_UNSTATED;
 * anything else fails as not_boolean.
 */
export function toOptedOut(polarity: ConsentPolarity): TransformFn {
  const words = new Map<string, boolean | RowProblem>();
  for (const w of OPTED_OUT) words.set(w, true);
  for (const w of CONSENTED_WORDS) words.set(consentWord(w), false);
  for (const w of YES) words.set(w, polarity === "opt-out");
  for (const w of NO) words.set(w, polarity !== "opt-out");
  for (const w of UNSTATED) {
    words.set(w, fail(CONSENT_UNSTATED, `"${w}" says nothing about consent: isOptedOut left unset`));
  }
  const yes = polarity === "opt-out" ? "yes" : "no";
  const unknown = fail(
    "not_boolean",
    `not a consent value (accepted: subscribed, unsubscribed, opted in, opted out, yes, no and their German, Spanish and French words; "${yes}" opts out in this column)`,
  );
  return (value) => {
    if (typeof value === "boolean") return polarity === "opt-out" ? value : !value;
    if (typeof value !== "string") return fail("not_boolean", "expects one consent value, got a list");
    const known = words.get(value.trim().toLowerCase()) ?? words.get(consentWord(value));
    // The messages name known words only, never the cell: it may hold personal data.
    return known ?? unknown;
  };
}
