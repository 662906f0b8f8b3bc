import { stringify } from "csv-stringify/sync";

/**
 * Whether a spreadsheet would run a CSV cell as a formula, so that it must be
 * written with a leading `'`: csv-stringify's `escape_formulas` rule (a first
 * character of `=`, `+`, `-`, `@`, tab, CR or their full-width forms; `-` is
 * left alone on a number, so `-5` stays a number and `-2+3+cmd@example.com`
 * text is escaped).
 *
 * The import's rejects file is written by csv-stringify with that option, and
 * both outputs must escape the same cells. The rule is asked of the library
 * (once per type and first character, then remembered) rather than copied
 * here, so the two cannot drift apart. The parts are not written with
 * csv-stringify itself: on 200k 14-column rows it took 2.4–4.2 s against
 * 0.6–0.9 s for the hand-written field writer, which the commit path pays.
 */
export function runsAsFormula(text: string, value: unknown): boolean {
  if (text === "") return false;
  const numeric = typeof value === "number" || typeof value === "bigint";
  const known = numeric ? NUMBER_VERDICTS : TEXT_VERDICTS;
  const first = text.charCodeAt(0);
  let verdict = known[first] as number;
  if (verdict === UNKNOWN) {
    // csv-stringify decides on the type and the first UTF-16 unit only: one probe answers for all such cells.
    const probe = numeric ? [[value]] : [[text]];
    verdict =
      stringify(probe, { escape_formulas: true }) === stringify(probe, { escape_formulas: false })
        ? PLAIN
        : FORMULA;
    known[first] = verdict;
  }
  return verdict === FORMULA;
}

const UNKNOWN = 0;
const PLAIN = 1;
const FORMULA = 2;
/** Verdicts by first UTF-16 unit; 64 KB each, filled as characters are met. */
const TEXT_VERDICTS = new Uint8Array(0x10000);
const NUMBER_VERDICTS = new Uint8Array(0x10000);
