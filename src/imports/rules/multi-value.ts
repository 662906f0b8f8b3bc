import { countDigits } from "./transforms/phone.ts";

/**
 * Cells that hold several emails or phones: Google Contacts joins them with
 * ` ::: `, other exports with `;` or `,`. The first value is the field's
 * (email, phone), the rest go to the additional list.
 */

/** Whether a cell may hold several values; most cells do not, and cost this one test. */
const SEPARATOR = /[;,]|:::/;

export function mayHoldSeveral(cell: string): boolean {
  return SEPARATOR.test(cell);
}

/** Digits a part of a phone cell needs to be a number of its own: "+49 30 1234,5" is one number with a pause. */
const PHONE_MIN_DIGITS = 6;

/**
 * The values of a cell, trimmed, empty ones dropped. ` ::: ` and `;` always
 * separate; `,` separates emails always, and phones only where the part
 * after it holds a number of its own (6 digits or more): a comma followed by
 * an extension or a dialling pause stays in the number.
 */
export function splitValues(cell: string, phones: boolean): string[] {
  const out: string[] = [];
  for (const coarse of cell.split(":::")) {
    for (const part of coarse.split(";")) {
      if (!part.includes(",")) {
        const t = part.trim();
        if (t !== "") out.push(t);
        continue;
      }
      let pending = "";
      for (const piece of part.split(",")) {
        if (phones && pending !== "" && countDigits(piece) < PHONE_MIN_DIGITS) {
          pending += `,${piece}`;
          continue;
        }
        const t = pending.trim();
        if (t !== "") out.push(t);
        pending = piece;
      }
      const t = pending.trim();
      if (t !== "") out.push(t);
    }
  }
  return out;
}

/**
 * Words exports write in an empty email or phone cell (HubSpot's `null`, a
 * CRM's `n/a` or `-`): no address or number can look like them, so they are
 * read as an empty cell rather than an invalid value. Only for email and
 * phone columns: elsewhere "None" or "Null" may be a value.
 */
const NO_VALUE = /^\s*(?:null|nil|none|n\/a|na|#n\/a|-+)\s*$/i;

export function saysNoValue(cell: string): boolean {
  return cell.length <= 8 && NO_VALUE.test(cell);
}
